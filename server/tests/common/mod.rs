//! Test helpers: the backends, a fault-injecting store wrapper, a GCS-like generations store, a
//! naive shared-list comparator, a TCP proxy that records each request, the one HTTP client of the
//! tests, the app in-process, the `pickup serve` harness, and builders.
#![allow(dead_code)]

pub mod backends;
pub mod client;
pub mod fault;
pub mod generations;
pub mod in_process;
pub mod live_view;
pub mod naive;
pub mod proxy;
pub mod redis;
pub mod server;
pub mod stream;
pub mod wait;

use app::contract::{ItemUpdate, NewItem, Owner, Status};
use pickup::index::Index;
use pickup::index::Limits;
use pickup::index::ManualClock;
use pickup::index::Producer;
use pickup::index::Workspace;
use pickup::index::{ListOrder, Store};
use std::sync::Arc;

/// 2027-01-15, so test ids are realistic.
pub const T0: u64 = 1_800_000_000_000;
pub const HOUR: u64 = 3_600_000;

pub fn ws() -> Workspace {
    Workspace::parse("acme").unwrap()
}

pub fn owner(sub: &str) -> Owner {
    Owner {
        sub: sub.into(),
        name: sub.to_uppercase(),
    }
}

/// `sub` as the producer of what it registers (named as [`owner`] names it).
pub fn producer(sub: &str) -> Producer {
    Producer {
        user: pickup::index::UserId::parse(sub).unwrap(),
        name: sub.to_uppercase(),
    }
}

pub fn new_item(key: &str, status: Status) -> NewItem {
    NewItem {
        key: key.into(),
        title: format!("item {key}"),
        url: None,
        status: Some(status),
        progress: None,
    }
}

pub fn index_on(
    inner: Arc<dyn object_store::ObjectStore>,
    order: ListOrder,
    clock: &ManualClock,
) -> Index {
    index_of(Store::wrap(inner, order, "test://"), clock)
}

/// An index on `store`, whose transient faults are retried quickly: faults injected in tests
/// are meant to be seen.
pub fn index_of(store: Store, clock: &ManualClock) -> Index {
    let store = store.with_retry(pickup::index::Retry {
        retries: 3,
        min_delay: std::time::Duration::from_millis(1),
        max_delay: std::time::Duration::from_millis(5),
    });
    Index::new(store, Limits::default(), 8, Arc::new(clock.clone()))
}

/// `store` behind a fault wrapper (which also counts what passes through it).
pub fn faulty(store: &Store, clock: &ManualClock) -> (Index, Arc<fault::FaultStore>) {
    let (store, faults) = store
        .clone()
        .layer(|inner| Arc::new(fault::FaultStore::new(inner)));
    (index_of(store, clock), faults)
}

/// The keys of the tests, spelled as the old path helpers were.
pub mod key {
    use pickup::index::ItemId;
    use pickup::index::Key;
    use pickup::index::{UserId, Workspace};

    pub fn marker(ws: &Workspace, id: &ItemId) -> Key {
        Key::Marker(ws.clone(), id.clone())
    }
    pub fn item(ws: &Workspace, id: &ItemId) -> Key {
        Key::Record(ws.clone(), id.clone())
    }
    pub fn dismissal(ws: &Workspace, user: &UserId, id: &ItemId) -> Key {
        Key::Dismissal(ws.clone(), user.clone(), id.clone())
    }
    pub fn owner_marker(ws: &Workspace, user: &UserId, id: &ItemId) -> Key {
        Key::OwnerMarker(ws.clone(), user.clone(), id.clone())
    }
}

/// The listings of the tests.
pub mod scope {
    use pickup::index::Scope;
    use pickup::index::Workspace;

    pub fn markers(ws: &Workspace) -> Scope {
        Scope::Markers(ws.clone())
    }
    pub fn items(ws: &Workspace) -> Scope {
        Scope::Records(ws.clone())
    }
    pub fn dismissals(ws: &Workspace) -> Scope {
        Scope::AllDismissals(ws.clone())
    }
    pub fn all_owner_markers(ws: &Workspace) -> Scope {
        Scope::AllOwnerMarkers(ws.clone())
    }
}

/// The item ids listed in a scope, sorted (keys and strays alike).
pub async fn names(store: &Store, scope: pickup::index::Scope) -> Vec<String> {
    let found = store.list(&scope).await.unwrap();
    let mut v: Vec<String> = found.ids().map(|id| id.to_string()).collect();
    v.extend(found.strays);
    v.sort();
    v
}

/// Every key of every workspace.
pub async fn all_keys(store: &Store) -> Vec<pickup::index::Key> {
    use pickup::index::Scope;
    let mut out = Vec::new();
    for ws in store.workspaces().await.unwrap() {
        for scope in [
            Scope::Markers(ws.clone()),
            Scope::Records(ws.clone()),
            Scope::AllDismissals(ws.clone()),
            Scope::AllOwnerMarkers(ws.clone()),
        ] {
            out.extend(store.list(&scope).await.unwrap().keys);
        }
    }
    out
}

/// Memory store (lists in key order) behind a fault wrapper.
pub fn memory_index(clock: &ManualClock) -> (Index, Arc<fault::FaultStore>) {
    let faults = Arc::new(fault::FaultStore::new(Arc::new(
        object_store::memory::InMemory::new(),
    )));
    (index_on(faults.clone(), ListOrder::Sorted, clock), faults)
}

/// Local file system store in a fresh directory, behind a fault wrapper.
pub fn file_index(clock: &ManualClock) -> (Index, Arc<fault::FaultStore>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let fs = object_store::local::LocalFileSystem::new_with_prefix(dir.path()).unwrap();
    let faults = Arc::new(fault::FaultStore::new(Arc::new(fs)));
    (
        index_on(faults.clone(), ListOrder::Unsorted, clock),
        faults,
        dir,
    )
}

/// The markers of `acme`, straight from the store's own listing.
pub async fn markers(index: &Index) -> Vec<String> {
    names(index.store(), scope::markers(&ws())).await
}

/// Mark an item finished at the clock's current time.
pub async fn finish(index: &Index, id: &str, status: Status) {
    let id = pickup::index::ItemId::parse(id).unwrap();
    let up = ItemUpdate {
        progress: Some(1.0),
        ..ItemUpdate::new("done", status)
    };
    let record = index.get(&ws(), &id).await.unwrap().0;
    let owner = pickup::index::UserId::parse(&record.owner.sub).unwrap();
    index.update(&ws(), &id, &up, &owner, None).await.unwrap();
}
