//! Writes: registrations land (even two of one key in one millisecond), a reader's prune never
//! drops a registration made while it read, and running out of ids is a conflict.

use crate::common::backends::Backend;
use crate::common::raw::path;
use crate::common::*;
use crate::support::*;
use app::contract::{Filter, Status};
use pickup::index::ManualClock;

/// Register: create-only record then marker; two registrations of one key in one millisecond
/// (on two threads) both land, as do two of different keys; the store's own listing has every
/// marker; records round-trip; the page shows the newest run of each key, newest first.
pub async fn register_and_list(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, store) = open(b, &clock);
    let mut ids = Vec::new();
    for i in 0..8 {
        let r = reg(&index, &format!("k{i}"), Status::Running, "bob").await;
        ids.push(r.id);
        clock.advance(1);
    }
    let spawn = |key: &'static str, who: &'static str| {
        let index = index.clone();
        tokio::spawn(async move { reg(&index, key, Status::Running, who).await.id })
    };
    // The same key twice in the same millisecond, on two threads: the create-only put of the
    // second finds the id taken and moves on by 1 ms.
    let (r1, r2) = (spawn("same", "a"), spawn("same", "b"));
    let (r1, r2) = (r1.await.unwrap(), r2.await.unwrap());
    assert_ne!(r1, r2, "{}: both registrations land", b.name);
    let (older, newer) = if r1 > r2 { (r1, r2) } else { (r2, r1) };
    assert_eq!(id_of(&older).created_ms() + 1, id_of(&newer).created_ms());
    // Two different keys at once.
    let (p, q) = (spawn("p", "a"), spawn("q", "b"));
    ids.extend([older.clone(), newer, p.await.unwrap(), q.await.unwrap()]);
    ids.sort();

    assert_eq!(
        markers(&index).await,
        ids,
        "{}: the store lists every marker",
        b.name
    );
    if b.sorted {
        assert_eq!(
            store.listed("ws/acme/markers").await,
            ids,
            "{}: a sorted store lists in key order",
            b.name
        );
    }
    for id in &ids {
        let (rec, _) = index.get(&ws(), &id_of(id)).await.unwrap();
        assert_eq!(&rec.id, id);
        assert_eq!(rec.ws, "acme");
    }

    clock.advance(1_000);
    let read = index
        .recent(&ws(), &alice(), Filter::All, Some(50), None)
        .await
        .unwrap();
    let shown = shown(&read.page);
    let want: Vec<String> = ids.iter().filter(|i| **i != older).cloned().collect();
    assert_eq!(shown, want, "{}: newest first, one per key", b.name);
    assert!(!read.page.more && !read.page.partial);
    // Two runs of one key in flight within the clock skew: the newest id is shown, and
    // neither is deleted (either may really be the newest).
    assert!(read.prune.deletes.is_empty(), "{}", b.name);
    let mine = index
        .recent(&ws(), &user("a"), Filter::Mine, Some(50), None)
        .await
        .unwrap()
        .page;
    assert!(mine.cards.iter().all(|c| c.owner.sub == "a"));
}

/// The race the design exists for: reader lists → producer registers X → reader prunes. X
/// stays. (The same interleaving against a read-modify-written list loses X:
/// `tests/marker_index.rs`, `naive_shared_list_loses_a_concurrent_registration`.)
pub async fn reader_prune_race(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, _) = open(b, &clock);
    let a = reg(&index, "a", Status::Succeeded, "bob").await;
    clock.advance(25 * HOUR); // A finished more than keep-finished ago: dead

    // The reader lists and decides…
    let read = index
        .recent(&ws(), &alice(), Filter::All, None, None)
        .await
        .unwrap();
    assert!(
        read.prune
            .deletes
            .iter()
            .any(|(k, _)| k.id().unwrap().to_string() == a.id),
        "{}: A is planned dead",
        b.name
    );
    // …a producer registers X in between…
    let x = reg(&index, "x", Status::Running, "bob").await;
    // …and the reader prunes.
    index.apply(&read.prune).await;

    let after = markers(&index).await;
    assert_eq!(
        after,
        vec![x.id.clone()],
        "{}: X is listed, A is gone",
        b.name
    );
    let page = index
        .recent(&ws(), &alice(), Filter::All, None, None)
        .await
        .unwrap()
        .page;
    assert_eq!(page.cards.len(), 1);
    assert_eq!(page.cards[0].id, x.id);
}

/// Running out of ids for one key is its own error (409 conflict), not "store unavailable".
pub async fn taken_ids_are_a_conflict(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, store) = open(b, &clock);
    for ms in T0..T0 + 5 {
        let id =
            pickup::index::ItemId::new(ms, pickup::index::SubKey::parse("k").unwrap()).unwrap();
        store.put(&path(&key::item(&ws(), &id)), "{}").await;
    }
    let res = index
        .register(&ws(), &new_item("k", Status::Running), &producer("a"))
        .await;
    let err = res.unwrap_err();
    assert!(
        matches!(err, pickup::index::IndexError::IdsTaken { .. }),
        "{}: {err:?}",
        b.name
    );
    assert_eq!(err.code().http_status(), 409);
}
