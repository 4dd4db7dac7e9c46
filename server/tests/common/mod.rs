//! Test helpers: the backends, a fault-injecting store layer, a GCS-like generations store, the
//! raw object store under an index (`raw`: the documented layout, literally), a naive
//! shared-list comparator, a TCP proxy that records each request, the one HTTP client of the
//! tests, `pickup` commands in-process (`cli`), the app in-process, the `pickup serve` harness,
//! and builders.
#![allow(dead_code)]

pub mod backends;
pub mod cli;
pub mod client;
pub mod fault;
pub mod generations;
pub mod in_process;
pub mod live_view;
pub mod naive;
pub mod proxy;
pub mod raw;
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
        status: Some(status),
        ..NewItem::default()
    }
}

/// An index on the store `url` names, opened as `PICKUP_STORE` opens it (`memory://` is a
/// fresh store each time), telling the time by `clock`.
pub fn index_at(url: &str, clock: &ManualClock) -> Index {
    Index::open(url, Limits::default(), 8, Arc::new(clock.clone()))
        .unwrap_or_else(|e| panic!("{url}: {e}"))
}

/// `index` with its transient faults retried quickly: faults injected in tests are meant to be
/// seen.
pub fn quick(index: Index) -> Index {
    index.with_retry(
        3,
        std::time::Duration::from_millis(1),
        std::time::Duration::from_millis(5),
    )
}

/// `index` (with [`quick`] retries) behind a fault layer, which also counts what passes
/// through it.
pub fn faulty(index: Index) -> (Index, Arc<fault::FaultStore>) {
    let mut layer = None;
    let index = quick(index).through(|inner| {
        let faults = Arc::new(fault::FaultStore::new(inner));
        layer = Some(faults.clone());
        faults
    });
    (
        index,
        layer.expect("through hands its layer the object store"),
    )
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
    pub fn pin(ws: &Workspace, user: &UserId, id: &ItemId) -> Key {
        Key::Pin(ws.clone(), user.clone(), id.clone())
    }
}

/// Every key of every workspace but the viewers' looks, as the index lists them
/// ([`Index::workspaces`], then [`Index::versions`] of each).
pub async fn all_keys(index: &Index) -> Vec<pickup::index::Key> {
    let mut out = Vec::new();
    for ws in index.workspaces().await.unwrap() {
        out.extend(
            index
                .versions(&ws)
                .await
                .unwrap()
                .into_iter()
                .map(|(k, _)| k),
        );
    }
    out
}

/// Memory store (lists in key order) behind a fault layer.
pub fn memory_index(clock: &ManualClock) -> (Index, Arc<fault::FaultStore>) {
    faulty(index_at("memory://", clock))
}

/// Local file system store in a fresh directory, behind a fault layer.
pub fn file_index(clock: &ManualClock) -> (Index, Arc<fault::FaultStore>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.path().display());
    let (index, faults) = faulty(index_at(&url, clock));
    (index, faults, dir)
}

/// The markers of `acme` (the names under `ws/acme/markers/`, sorted), straight from the
/// listing of the object store the index speaks to.
pub async fn markers(index: &Index) -> Vec<String> {
    raw::Raw::of(index).names("ws/acme/markers").await
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
