//! The pure core of the index: names, ids, records and the two halves of a read (what to
//! resolve, and what a resolved marker means). No I/O, no clock of its own: everything here is
//! unit-tested without a store.

pub(crate) mod id;
pub(crate) mod names;
pub(crate) mod plan;
pub(crate) mod record;
pub(crate) mod verdict;
