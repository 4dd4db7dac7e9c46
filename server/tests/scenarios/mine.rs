//! "Mine": the viewer's own items, listed from `ws/{ws}/owners/{viewer}/`.

use crate::common::backends::Backend;
use crate::common::fault::Op;
use crate::common::*;
use crate::support::*;
use app::contract::{Filter, Status};
use pickup::index::ManualClock;

/// Mine shows the viewer's own items only; stalled items are live and flagged.
pub async fn filter_and_stalled(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, _) = open(b, &clock);
    reg(&index, "theirs", Status::Running, "bob").await;
    let mine = reg(&index, "mine", Status::Running, "alice").await;
    clock.advance(16 * 60_000);
    let page = index
        .recent(&ws(), &alice(), Filter::Mine, None, None)
        .await
        .unwrap()
        .page;
    assert_eq!(page.cards.len(), 1, "{}", b.name);
    assert_eq!(page.cards[0].id, mine.id);
    assert!(page.cards[0].stalled, "{}", b.name);
}

/// "Mine" in a busy workspace: one item of yours behind 200 newer items of others is found,
/// and the read lists and resolves a number of keys that does not grow with the workspace
/// (counted through the fault layer).
pub async fn busy_workspace_bounded_cost(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, faults, _) = open_faulty(b, &clock);
    let mine = register_at(&index, &keys_named("mine", 1), Status::Running, T0 - 10_000).await;
    for i in 0..200 {
        reg(&index, &format!("theirs{i}"), Status::Running, "bob").await;
        clock.advance(1);
    }
    faults.forget_calls();
    let listed_before = faults.listed.load(std::sync::atomic::Ordering::SeqCst);
    let page = index
        .recent(&ws(), &user("a"), Filter::Mine, Some(8), None)
        .await
        .unwrap()
        .page;
    let got = shown(&page);
    assert_eq!(
        got, mine,
        "{}: your item, behind 200 newer of others",
        b.name
    );
    assert!(!page.more);
    let listed = faults.listed.load(std::sync::atomic::Ordering::SeqCst) - listed_before;
    let reads = faults.calls_of(Op::Get).len();
    assert!(
        listed <= 2 && reads <= 1,
        "{}: listed {listed} keys, read {reads} records",
        b.name
    );
}
