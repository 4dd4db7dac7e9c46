//! The marker index: one empty object per item under `ws/{ws}/markers/`, never a shared list.
//!
//! - `core`: the pure rules (names, ids, records, what a listing means), tested without a
//!   store; it knows nothing of the store.
//! - `store`: the only code in Pickup that speaks object_store. Nothing of it is reachable
//!   beyond the index: the rest of Pickup names items, keys and versions, and asks [`Index`].
//! - `key` and `version`: the index's keys (what each object Pickup writes is) and a record's
//!   version (what `If-Match` compares).
//! - `cache`: the store's reads, shared by concurrent requests (serve only).
//! - `marker_index`: [`Index`], what it holds and how it is opened; `write`, `read` and
//!   `prune`: its three paths over the store; `clock_check`: whether this server's clock may
//!   judge ages.
//! - `copy`: [`MemoryIndex`], an index on memory written key by key (a live watcher's copy
//!   of a workspace, whose records may be listed but not yet read).
//! - `janitor`: whole-workspace sweeps, so nothing Pickup writes lives forever.
//!
//! Everything another part of Pickup may use is re-exported here; nothing else is reachable.

mod cache;
mod clock;
mod clock_check;
mod copy;
pub mod core;
mod error;
mod janitor;
mod key;
mod marker_index;
mod pins;
mod prune;
mod read;
mod store;
mod version;
mod write;

pub use self::clock::{Clock, ManualClock, SystemClock};
pub use self::copy::{CopyPage, MemoryIndex};
pub use self::core::id::{IdError, ItemId};
pub use self::core::names::{NameError, SubKey, UserId, Workspace};
pub use self::core::plan::Reason;
pub use self::core::record::{BodyError, Producer};
pub use self::core::verdict::Limits;
pub use self::error::{IndexError, Result};
pub use self::janitor::Sweep;
pub use self::key::{Key, KeyKind};
pub use self::marker_index::{Index, PageRead, SharedPage};
pub use self::pins::MAX_PINS;
pub use self::version::Version;

pub(crate) use self::core::record::{check_as_written, RecordError};
