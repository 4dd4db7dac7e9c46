//! Transient faults, injected through the fault layer on every backend: retried within a bound,
//! a write applied whose answer was lost settled by reading back, a fault past the bound an
//! error that leaves nothing half-listed, and a failed delete done again by a later read.
//!
//! A write whose caller goes away, and shutdown's drain of it, are the service's (which an
//! integration test cannot reach): `src/service/tests.rs`.

use crate::common::backends::Backend;
use crate::common::fault::{Op, When};
use crate::common::*;
use crate::support::*;
use app::contract::{Filter, Status};
use pickup::index::ItemId;
use pickup::index::ManualClock;
use pickup::index::SubKey;

/// Transient faults on every kind of write, before and after the store applied them: every
/// registration is acknowledged, has its record and its marker, and is recorded once.
pub async fn transient_faults_are_retried(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, faults, store) = open_faulty(b, &clock);
    // Records and markers each fail at most twice in a row, below the retry bound of 3.
    faults.flaky(Op::Put, "ws/*/items/", 4, When::After);
    faults.flaky(Op::Put, "ws/*/items/", 7, When::Before);
    faults.flaky(Op::Put, "ws/*/markers/", 3, When::Before);
    faults.flaky(Op::Put, "ws/*/markers/", 5, When::After);
    let mut ids = Vec::new();
    for i in 0..200 {
        // Same key every 10: a retry must not be mistaken for a taken id, nor the reverse.
        let key = format!("k{}", i % 10);
        let record = index
            .register(&ws(), &new_item(&key, Status::Running), &producer("a"))
            .await
            .unwrap_or_else(|e| panic!("{}: registration {i} failed: {e}", b.name));
        ids.push(record.id);
        clock.advance(1);
    }
    let (before, after) = faults.injected();
    assert!(
        before > 20 && after > 20,
        "{}: faults were injected: {before} before, {after} after",
        b.name
    );
    faults.heal();
    let listed = markers(&index).await;
    let mut want = ids.clone();
    want.sort();
    want.dedup();
    assert_eq!(want.len(), 200, "200 distinct ids");
    assert_eq!(
        listed, want,
        "{}: every acknowledged registration has its marker",
        b.name
    );
    let records = store.names("ws/acme/items").await.len();
    assert_eq!(
        records, 200,
        "{}: and exactly one record each: none recorded twice",
        b.name
    );
    for id in &ids {
        let (r, _) = index.get(&ws(), &id_of(id)).await.unwrap();
        assert_eq!(&r.id, id);
    }
}

/// The ambiguous case on its own: the store applies the create and the answer is lost. The
/// retry meets its own record, recognises it by reading it back, and keeps the first id.
pub async fn lost_answer_is_settled(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, faults, store) = open_faulty(b, &clock);
    // Every record put is applied and its answer lost; the retry meets the record it wrote.
    faults.flaky(Op::Put, "ws/*/items/", 1, When::After);
    let r = index
        .register(&ws(), &new_item("a", Status::Running), &producer("a"))
        .await
        .unwrap_or_else(|e| panic!("{}: a lost answer is not a failure: {e}", b.name));
    let want = ItemId::new(T0, SubKey::parse("a").unwrap()).unwrap();
    assert_eq!(
        r.id,
        want.to_string(),
        "{}: the first id, not the next millisecond's",
        b.name
    );
    assert_eq!(
        store.names("ws/acme/items").await.len(),
        1,
        "{}: one record",
        b.name
    );
    assert_eq!(markers(&index).await, vec![r.id], "{}", b.name);
}

/// A fault that outlasts the retry bound is an error for the producer (503), and no marker
/// points at a record that was never written.
pub async fn past_the_bound(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, faults, _) = open_faulty(b, &clock);
    faults.fail(Op::Put, "ws/*/items/");
    let res = index
        .register(&ws(), &new_item("a", Status::Running), &producer("a"))
        .await;
    assert!(
        matches!(res, Err(pickup::index::IndexError::Store(_))),
        "{}: {res:?}",
        b.name
    );
    assert_eq!(
        faults.calls_of(Op::Put).len(),
        4,
        "{}: the first try and 3 retries, then it gives up",
        b.name
    );
    assert!(markers(&index).await.is_empty(), "{}", b.name);
}

/// A failed delete is logged, leaves the marker, and a later read deletes it.
pub async fn failed_delete_is_retried(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, faults, _) = open_faulty(b, &clock);
    let dead = reg(&index, "a", Status::Cancelled, "a").await;
    clock.advance(25 * HOUR);
    faults.fail(Op::Delete, "ws/*/markers/");
    let read = index
        .recent(&ws(), &alice(), Filter::All, None, None)
        .await
        .unwrap();
    let report = index.apply(&read.prune).await;
    assert_eq!((report.total(), report.failed), (0, 1), "{}", b.name);
    assert_eq!(markers(&index).await, vec![dead.id.clone()], "{}", b.name);
    faults.heal();
    let read = index
        .recent(&ws(), &alice(), Filter::All, None, None)
        .await
        .unwrap();
    let report = index.apply(&read.prune).await;
    assert_eq!(
        (report.total(), report.failed),
        (2, 0),
        "{}: the marker and its record",
        b.name
    );
    assert!(markers(&index).await.is_empty(), "{}", b.name);
}
