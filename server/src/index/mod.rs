//! The marker index: one empty object per item under `ws/{ws}/markers/`, never a shared list.
//!
//! - `core`: the pure rules (names, ids, records, what a listing means), tested without a
//!   store; it knows nothing of the store.
//! - `store`: the only code in Pickup that speaks object_store. Its vocabulary (keys, scopes,
//!   versions, errors, the [`Store`] itself) is re-exported here; the module is not.
//! - `cache`: the store's reads, shared by concurrent requests (serve only).
//! - `marker_index`: [`Index`], what it holds; `write`, `read` and `prune`: its three paths
//!   over the store; `clock_check`: whether this server's clock may judge ages.
//! - `copy`: [`MemoryIndex`], an index on memory written key by key (a live watcher's copy
//!   of a workspace, whose records may be listed but not yet read), and what the store tells
//!   such a copy ([`Index::versions`]).
//! - `janitor`: whole-workspace sweeps, so nothing Pickup writes lives forever.
//!
//! Everything another part of Pickup may use is re-exported here; nothing else is reachable.

mod cache;
mod clock;
mod clock_check;
mod copy;
mod core;
mod error;
mod janitor;
mod marker_index;
mod prune;
mod read;
// `pub(crate)` only while `cli.rs`, `demo.rs` and `wiring.rs` still name `index::store::…`: every
// item they use is re-exported below, and the module becomes private once they use those.
mod store;
mod write;

pub use self::clock::{Clock, ManualClock, SystemClock};
pub use self::clock_check::ClockStatus;
pub use self::copy::{CopyPage, MemoryIndex};
pub use self::core::id::{IdError, ItemId};
pub use self::core::names::{NameError, SubKey, UserId, Workspace};
pub use self::core::plan::{Ages, Budget, Listing, Planner, Reason, RIVALS_PER_KEY};
pub use self::core::record::{
    check_as_written, check_title, check_url, is_unsafe_char, new_record, updated_record,
    BodyError, Producer, RecordError,
};
pub use self::core::verdict::{judge, next_change_ms, Limits, RecordLookup, Verdict};
pub use self::error::{IndexError, Result};
pub use self::janitor::{every as janitor_every, sweep, workspaces, Sweep};
pub use self::marker_index::{Index, PageRead, SharedPage};
pub use self::prune::{FoundBy, Prune, PruneReport};
pub use self::store::{
    look_time, BadValidator, Expect, Found, Key, KeyKind, ListOrder, ListedLook, Moved, Pages,
    Retry, Scope, Store, StoreError, StoreTime, StoreUrlError, Stored, Version,
};

pub(crate) use self::cache::ReadCache;
pub(crate) use self::core::plan::Plan;
pub(crate) use self::core::record::{check_name, ms_to_time, owner_and_time};
pub(crate) use self::core::verdict::settle;
