//! Transient faults, injected through the fault layer on every backend: retried within a bound,
//! a write applied whose answer was lost settled by reading back, a fault past the bound an
//! error that leaves nothing half-listed, and a failed delete done again by a later read.

use crate::common::backends::Backend;
use crate::common::fault::{Held, Op, When};
use crate::common::*;
use crate::support::*;
use app::contract::{Filter, Status};
use pickup::index::ItemId;
use pickup::index::ManualClock;
use pickup::index::SubKey;
use std::sync::Arc;

/// Transient faults on every kind of write, before and after the store applied them: every
/// registration is acknowledged, has its record and its marker, and is recorded once.
pub async fn transient_faults_are_retried(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, faults, _) = open_faulty(b, &clock);
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
    let records = names(index.store(), scope::items(&ws())).await.len();
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
    let (index, faults, _) = open_faulty(b, &clock);
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
        names(index.store(), scope::items(&ws())).await.len(),
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

/// A registration whose caller went away once it reached the workspace's marker, which the
/// returned door holds until the test releases it (the client hung up, or the request timed out).
async fn a_registration_held_at_its_marker(b: &Backend) -> (pickup::service::Pickup, Arc<Held>) {
    use pickup::auth::Auth;
    use pickup::service::Pickup;
    let clock = ManualClock::new(T0);
    let (index, faults, _) = open_faulty(b, &clock);
    let auth = Auth::new(&[7u8; 32]).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let token = auth.mint("a", None, &["acme".into()], true, HOUR_DURATION, now);
    let pickup = Pickup::new(index, auth);
    let door = faults.hold(Op::Put, "ws/*/markers/");
    let who = pickup
        .auth()
        .authorize::<pickup::auth::Write>(Some(&token), "acme")
        .await
        .unwrap();
    let register = pickup.register(&who, new_item("k", Status::Running));
    tokio::select! {
        _ = register => panic!("{}: the marker's write is held, so register cannot end", b.name),
        () = door.reached.notified() => {}
    }
    (pickup, door)
}

/// A caller that goes away mid-registration does not cut the write half-way: the record, the
/// owner's marker and the workspace's marker are all written, so the item is not one that
/// "Mine" shows and the workspace never lists.
pub async fn a_write_outlives_its_caller(b: &Backend) {
    let (pickup, door) = a_registration_held_at_its_marker(b).await;
    door.release();
    pickup.finish_writes().await;
    assert_eq!(
        markers(pickup.index()).await.len(),
        1,
        "{}: the registration went on without its caller and wrote the marker",
        b.name
    );
    let records = names(pickup.index().store(), scope::items(&ws()))
        .await
        .len();
    assert_eq!(records, 1, "{}: and its one record", b.name);
}

/// At shutdown, a write still running when the connections' deadline is over is let finish
/// (until a later deadline of its own): cut there, the runtime would drop it half-way.
pub async fn shutdown_lets_a_running_write_finish_after_the_connections_deadline(b: &Backend) {
    use pickup::service::Drained;
    use std::time::Duration;
    let (pickup, door) = a_registration_held_at_its_marker(b).await;
    // The connections' deadline is already over; the writes have a minute more.
    let now = tokio::time::Instant::now();
    let drain = pickup.drain(now, now + Duration::from_secs(60));
    tokio::pin!(drain);
    assert!(
        tokio::time::timeout(Duration::from_millis(200), &mut drain)
            .await
            .is_err(),
        "{}: shutdown must wait for the held write, not end at the connections' deadline",
        b.name
    );
    door.release();
    assert_eq!(
        drain.await,
        Drained {
            writes: true,
            deletes: true
        },
        "{}",
        b.name
    );
    assert_eq!(markers(pickup.index()).await.len(), 1, "{}", b.name);
}

const HOUR_DURATION: std::time::Duration = std::time::Duration::from_secs(3_600);
