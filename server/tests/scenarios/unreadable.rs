//! Unreadable records: a record that cannot be read or parsed is unknown, never dead.

use crate::common::backends::Backend;
use crate::common::fault::Op;
use crate::common::raw::path;
use crate::common::*;
use crate::support::*;
use app::contract::{Filter, Status};
use pickup::index::ManualClock;

/// A record whose read fails (injected through the fault layer) keeps its marker and makes the
/// page partial; the janitor counts it unknown and deletes nothing. (A record that does not
/// parse: `expiry::finished_long_ago`.)
pub async fn read_error(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, faults, _) = open_faulty(b, &clock);
    let a = reg(&index, "a", Status::Running, "a").await;
    let b_item = reg(&index, "b", Status::Running, "a").await;
    clock.advance(2 * HOUR);
    faults.fail(Op::Get, &format!("ws/acme/items/{}", a.id));
    let read = index
        .recent(&ws(), &alice(), Filter::All, None, None)
        .await
        .unwrap();
    assert!(read.page.partial, "{}", b.name);
    assert_eq!(shown(&read.page), vec![b_item.id.clone()], "{}", b.name);
    assert!(read.prune.deletes.is_empty(), "{}", b.name);
    index.apply(&read.prune).await;
    let sweep = index.sweep(&ws(), false).await.unwrap();
    assert_eq!(sweep.unknown, 1, "{}", b.name);
    assert!(sweep.deletes.is_empty(), "{}", b.name);
    assert_eq!(markers(&index).await.len(), 2, "{}", b.name);
}

/// Unreadable records newer than the live items (a rolling upgrade that adds a status, a
/// garbled write) cannot hide them: up to 5N of them are read past, and the page says partial.
/// A record with a status this version does not know is a card with a neutral badge.
pub async fn do_not_hide_live_items(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, store) = open(b, &clock);
    let live = register_at(&index, &keys_named("live", 8), Status::Running, T0 - 1_000).await;
    unreadable(&index, 40, T0).await;
    let read = index
        .recent(&ws(), &alice(), Filter::All, Some(8), None)
        .await
        .unwrap();
    let got = shown(&read.page);
    let mut want = live.clone();
    want.sort();
    assert_eq!(
        got, want,
        "{}: the 8 live items behind 40 unreadable records",
        b.name
    );
    assert!(
        read.page.partial,
        "and the page says some items could not be read"
    );
    assert!(
        read.prune.deletes.is_empty(),
        "nothing unreadable is deleted"
    );

    // A newer producer's status: shown, not hidden, with a neutral badge.
    let [newer] =
        &register_at(&index, &keys_named("newer", 1), Status::Running, T0 + 100).await[..]
    else {
        unreachable!()
    };
    let record = path(&key::item(&ws(), &id_of(newer)));
    let stored = store.get(&record).await.expect("the record is there");
    let text = String::from_utf8(stored.to_vec()).unwrap();
    let paused = text.replace("\"status\":\"running\"", "\"status\":\"paused\"");
    assert_ne!(paused, text);
    store.put(&record, paused).await;
    let page = index
        .recent(&ws(), &alice(), Filter::All, Some(8), None)
        .await
        .unwrap()
        .page;
    assert_eq!(page.cards[0].id, *newer, "{}", b.name);
    assert_eq!(page.cards[0].badge(), "unknown");
}
