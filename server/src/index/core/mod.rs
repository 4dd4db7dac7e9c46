//! The pure core of the index: names, ids, records and the two halves of a read (what to
//! resolve, and what a resolved marker means). No I/O, no clock of its own: everything here is
//! unit-tested without a store. `plan` and `verdict` are reachable as they are, for the bench's
//! measures of a read's own CPU work (`make bench`, section 2).

pub(crate) mod id;
pub(crate) mod names;
pub mod plan;
pub(crate) mod record;
pub mod verdict;
