//! Test helpers: a fault-injecting store wrapper, a naive shared-list comparator, and builders.
#![allow(dead_code)]

pub mod fault;
pub mod generations;
pub mod naive;
pub mod server;

use app::model::{Owner, Status};
use pickup::clock::ManualClock;
use pickup::index::Index;
use pickup::names::Workspace;
use pickup::record::{ItemUpdate, NewItem};
use pickup::store::{ListOrder, Store};
use pickup::verdict::Limits;
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
    let mut store = Store::wrap(inner, order, "test://");
    // Faults injected here are meant to be seen: retry them, but quickly.
    store.retry = pickup::store::Retry {
        retries: 3,
        min_delay: std::time::Duration::from_millis(1),
        max_delay: std::time::Duration::from_millis(5),
    };
    Index::new(store, Limits::default(), 8, Arc::new(clock.clone()))
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
    let mut v: Vec<String> = index
        .names_under(&pickup::store::keys::markers(&ws()))
        .await
        .unwrap()
        .into_iter()
        .collect();
    v.sort();
    v
}

/// Mark an item finished at the clock's current time.
pub async fn finish(index: &Index, id: &str, status: Status) {
    let id = pickup::id::ItemId::parse(id).unwrap();
    let up = ItemUpdate {
        progress: Some(1.0),
        ..ItemUpdate::new("done", status)
    };
    let record = index.get(&ws(), &id).await.unwrap().0;
    let owner = pickup::names::UserId::parse(&record.owner.sub).unwrap();
    index.update(&ws(), &id, &up, &owner, None).await.unwrap();
}

/// What a read or a sweep would delete, as store paths (comparable with `keys::…`).
pub fn paths(
    deletes: &[(pickup::store::Key, pickup::plan::Reason)],
) -> Vec<(object_store::path::Path, pickup::plan::Reason)> {
    deletes.iter().map(|(k, r)| (k.path(), r.clone())).collect()
}
