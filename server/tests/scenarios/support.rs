//! What the scenarios share: users, ids, an index on a backend, and writes at chosen times.

use crate::common::backends::Backend;
use crate::common::fault::FaultStore;
use crate::common::raw::{path, Raw};
use crate::common::*;
use app::contract::{ItemRecord, ItemUpdate, Status};
use pickup::index::Index;
use pickup::index::ItemId;
use pickup::index::ManualClock;
use pickup::index::{SubKey, UserId};
use std::sync::Arc;

pub const DAY: u64 = 24 * HOUR;

pub fn user(sub: &str) -> UserId {
    UserId::parse(sub).unwrap()
}

pub fn alice() -> UserId {
    user("alice")
}

pub fn id_of(s: &str) -> ItemId {
    ItemId::parse(s).unwrap()
}

pub fn up(status: Status, progress: f64) -> ItemUpdate {
    ItemUpdate {
        progress: Some(progress),
        ..ItemUpdate::new(format!("progress {progress}"), status)
    }
}

/// The ids of a page's cards, in the page's order.
pub fn shown(page: &app::contract::RecentPage) -> Vec<String> {
    page.cards.iter().map(|c| c.id.clone()).collect()
}

/// Register `key` for `who`, with `status`, at the index's time.
pub async fn reg(index: &Index, key: &str, status: Status, who: &str) -> ItemRecord {
    index
        .register(&ws(), &new_item(key, status), &producer(who))
        .await
        .unwrap()
}

/// A fresh root on `b`, and an index on it telling the time by `clock` (the default retries);
/// also the object store under it.
pub fn open(b: &Backend, clock: &ManualClock) -> (Index, Raw) {
    let index = b.open("run", clock);
    let raw = Raw::of(&index);
    (index, raw)
}

/// A fresh root on `b` behind the fault layer, which injects faults and counts calls (its
/// retries are quick: injected faults are meant to be seen). Also the object store under the
/// layer, which neither injects nor counts.
pub fn open_faulty(b: &Backend, clock: &ManualClock) -> (Index, Arc<FaultStore>, Raw) {
    let (index, raw) = open(b, clock);
    let (index, faults) = faulty(index);
    (index, faults, raw)
}

/// Register `keys` at `at_ms`, `at_ms + 1`, … through an index whose clock says so.
pub async fn register_at(
    index: &Index,
    keys: &[String],
    status: Status,
    at_ms: u64,
) -> Vec<String> {
    let at = ManualClock::new(at_ms);
    let then = index.clone().with_clock(Arc::new(at.clone()));
    let mut ids = Vec::new();
    for k in keys {
        ids.push(
            then.register(&ws(), &new_item(k, status), &producer("a"))
                .await
                .unwrap()
                .id,
        );
        at.advance(1);
    }
    ids
}

pub fn keys_named(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

/// Write `n` markers whose records do not parse, created at `from_ms`, `from_ms + 1`, ….
pub async fn unreadable(index: &Index, n: u64, from_ms: u64) {
    let raw = Raw::of(index);
    for i in 0..n {
        let id = ItemId::new(from_ms + i, SubKey::parse(&format!("bad{i}")).unwrap()).unwrap();
        raw.put(&path(&key::item(&ws(), &id)), "{").await;
        raw.put(&path(&key::marker(&ws(), &id)), "").await;
    }
}
