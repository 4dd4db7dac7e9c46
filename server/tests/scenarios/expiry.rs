//! Deaths by age: a marker older than the TTL goes by its name alone; an item finished longer
//! ago than keep-finished goes after its record was read, marker first, then the record.

use crate::common::backends::Backend;
use crate::common::fault::Op;
use crate::common::raw::path;
use crate::common::*;
use crate::support::*;
use app::contract::{Filter, Status};
use pickup::index::IndexError;
use pickup::index::ManualClock;
use pickup::index::Reason;

/// A marker older than the TTL is deleted by its name alone: its record is never read.
pub async fn by_name_without_a_resolve(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, faults, _) = open_faulty(b, &clock);
    let old = reg(&index, "old", Status::Running, "a").await;
    clock.advance(8 * DAY);
    let young = reg(&index, "young", Status::Running, "a").await;
    faults.forget_calls();
    let read = index
        .recent(&ws(), &alice(), Filter::All, None, None)
        .await
        .unwrap();
    assert_eq!(
        faults.calls_of(Op::Get),
        vec![format!("ws/acme/items/{}.json", young.id)],
        "{}: only the young item is resolved",
        b.name
    );
    assert_eq!(
        read.prune.deletes,
        vec![(key::marker(&ws(), &id_of(&old.id)), Reason::Expired)],
        "{}",
        b.name
    );
    index.apply(&read.prune).await;
    assert_eq!(markers(&index).await, vec![young.id], "{}", b.name);
}

/// Finished longer ago than keep-finished: dead (registered failed, or finished through an
/// update). Pruning deletes each dead item's marker, then its record, and nothing else: not the
/// live items' records, not a record that does not parse (unknown: kept, the page partial).
pub async fn finished_long_ago(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, faults, store) = open_faulty(b, &clock);
    let failed = reg(&index, "failed", Status::Failed, "a").await;
    let finished = reg(&index, "finished", Status::Running, "a").await;
    finish(&index, &finished.id, Status::Succeeded).await;
    let garbled = reg(&index, "garbled", Status::Running, "a").await;
    let record = path(&key::item(&ws(), &id_of(&garbled.id)));
    store.put(&record, "{not json").await;
    clock.advance(25 * HOUR);
    let mut live = Vec::new();
    for k in ["b", "c"] {
        live.push(reg(&index, k, Status::Running, "a").await.id);
    }
    faults.forget_calls();
    let read = index
        .recent(&ws(), &alice(), Filter::All, None, None)
        .await
        .unwrap();
    assert_eq!(read.page.cards.len(), 2, "{}", b.name);
    assert!(
        read.page.partial,
        "{}: an unreadable record makes the page partial",
        b.name
    );
    let mut dead = read.prune.deletes.clone();
    dead.sort_by(|a, b| a.0.cmp(&b.0));
    let mut want = vec![
        (
            key::marker(&ws(), &id_of(&failed.id)),
            Reason::FinishedLongAgo,
        ),
        (
            key::marker(&ws(), &id_of(&finished.id)),
            Reason::FinishedLongAgo,
        ),
    ];
    want.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(dead, want, "{}", b.name);
    let report = index.apply(&read.prune).await;
    assert_eq!((report.total(), report.failed), (4, 0));
    // Only the dead items' keys, each marker right before its record, in the plan's order.
    let want_deletes: Vec<String> = read
        .prune
        .deletes
        .iter()
        .flat_map(|(k, _)| {
            let id = k.id().unwrap();
            [
                format!("ws/acme/markers/{id}"),
                format!("ws/acme/items/{id}.json"),
            ]
        })
        .collect();
    assert_eq!(
        faults.calls_of(Op::Delete),
        want_deletes,
        "{}: only the dead items' markers, each then its record",
        b.name
    );
    // The live items' records are untouched.
    for id in &live {
        assert!(index.get(&ws(), &id_of(id)).await.is_ok(), "{}", b.name);
    }
    live.push(garbled.id.clone());
    live.sort();
    assert_eq!(markers(&index).await, live, "{}", b.name);
    assert!(
        matches!(
            index.get(&ws(), &id_of(&failed.id)).await,
            Err(IndexError::NotFound)
        ),
        "a dead item's record goes with its marker"
    );
    // The janitor agrees: the garbled one is unknown and kept. It deletes only the owner
    // markers of the two items the read deleted (a read of everyone's items does not know
    // their owners).
    let sweep = index.sweep(&ws(), false).await.unwrap();
    let a = user("a");
    let mut want = vec![
        (
            key::owner_marker(&ws(), &a, &id_of(&failed.id)),
            Reason::OrphanOwnerMarker,
        ),
        (
            key::owner_marker(&ws(), &a, &id_of(&finished.id)),
            Reason::OrphanOwnerMarker,
        ),
    ];
    want.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(sweep.unknown, 1, "{}", b.name);
    assert_eq!(sweep.deletes, want, "{}", b.name);
}
