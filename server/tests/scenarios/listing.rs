//! Listing: on a store that lists in key order a read stops listing once it has its budget;
//! `more` says whether anything lies beyond.

use crate::common::backends::Backend;
use crate::common::fault::Op;
use crate::common::*;
use crate::support::*;
use app::contract::{Filter, Status};
use futures::StreamExt;
use pickup::index::ManualClock;
use std::sync::Arc;
use std::time::Instant;

/// 1,500 markers: registered 32 at a time; the full listing is timed (and on sorted stores
/// checked to come back in key order, across list pages); a read of 8 cards stops listing early
/// on a sorted store (whether the store is listed in pages or through a layer that lists
/// plainly) and shows the 8 newest. The figures are printed (`-- --nocapture`).
pub async fn early_stop_and_list_time(b: &Backend) {
    const N: u64 = 1_500;
    let clock = ManualClock::new(T0 + N + 1_000);
    let (index, store) = open(b, &clock);
    let t_reg = Instant::now();
    let ids: Vec<String> = futures::stream::iter(0..N)
        .map(|i| {
            let index = index.clone();
            async move {
                // Each its own millisecond: item i is created at T0 + i.
                let at = index.with_clock(Arc::new(ManualClock::new(T0 + i)));
                reg(&at, &format!("k{i}"), Status::Running, "a").await.id
            }
        })
        .buffer_unordered(32)
        .collect()
        .await;
    let reg_s = t_reg.elapsed().as_secs_f64();
    let mut sorted_ids = ids.clone();
    sorted_ids.sort();

    let mut list_ms = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let items = index.items(&ws()).await.unwrap();
        list_ms.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(items.len(), N as usize, "{}", b.name);
    }
    if b.sorted {
        assert_eq!(
            store.listed("ws/acme/markers").await,
            sorted_ids,
            "{}: a sorted store lists 1,500 markers in key order",
            b.name
        );
    }

    // Without a layer in between: on the clouds, the store's own pages, sized to the read.
    let budget = pickup::index::core::plan::Budget::new(8).candidates() + 1;
    let t = Instant::now();
    let direct = index
        .recent(&ws(), &alice(), Filter::All, Some(8), None)
        .await
        .unwrap();
    let direct_ms = t.elapsed().as_secs_f64() * 1e3;
    if b.sorted {
        assert!(
            direct.listed <= budget,
            "{}: the store returned {} keys of 1,500 markers for a read of 8 (in pages: {}): Index::open's list order is sorted",
            b.name,
            direct.listed,
            b.lists_in_pages()
        );
    }
    assert_eq!(direct.page.cards.len(), 8);
    assert!(direct.page.more);
    let (counting, faults) = faulty(index.clone());
    let t = Instant::now();
    let read = counting
        .recent(&ws(), &alice(), Filter::All, Some(8), None)
        .await
        .unwrap();
    let read_ms = t.elapsed().as_secs_f64() * 1e3;
    let listed = faults.listed.load(std::sync::atomic::Ordering::SeqCst);
    let shown = shown(&read.page);
    assert_eq!(
        shown,
        sorted_ids[..8].to_vec(),
        "{}: the 8 newest, newest first",
        b.name
    );
    assert!(read.page.more);
    assert_eq!(
        faults.calls_of(Op::Get).len(),
        8,
        "resolved only the first 8"
    );
    if b.sorted {
        assert!(
            listed <= budget,
            "{}: listed {listed} of 1,500 markers",
            b.name
        );
    } else {
        assert_eq!(
            listed, N as usize,
            "{}: an unsorted store lists all (Index::open's list order is unsorted)",
            b.name
        );
    }
    // A janitor's sweep lists everything and reads every record (a dry run: all are live).
    let t = Instant::now();
    let sweep = index.sweep(&ws(), true).await.unwrap();
    let sweep_s = t.elapsed().as_secs_f64();
    assert_eq!((sweep.markers(), sweep.deletes.len()), (N as usize, 0));
    list_ms.sort_by(f64::total_cmp);
    println!(
        "early_stop_and_list_time: backend {}: 1,500 markers registered in {reg_s:.1} s (32 at a time); listing all 1,500: {:.0} ms (median of 3; {:.0}..{:.0} ms); a read of 8 cards took {direct_ms:.0} ms, the store returning {} keys ({}), and {read_ms:.0} ms through a layer that lists plainly (it took {listed}); a janitor sweep (1,500 record reads) took {sweep_s:.1} s",
        b.name,
        list_ms[1],
        list_ms[0],
        list_ms[2],
        direct.listed,
        if b.lists_in_pages() {
            "in pages sized to the read"
        } else {
            "one listing"
        }
    );
}

/// `more` says there may be more live items: false when the listing ended exactly where the
/// plan became full (a sorted store stops listing there), true when something lies beyond.
pub async fn more_is_false_at_the_last_candidate(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, _) = open(b, &clock);
    // Cap 2: a plan holds 16 candidates, and here all 16 get resolved: 10 unreadable (their
    // allowance), 4 finished long ago and 2 live (the main budget of 6).
    register_at(
        &index,
        &keys_named("live", 2),
        Status::Running,
        T0 - 3 * 86_400_000,
    )
    .await;
    register_at(
        &index,
        &keys_named("done", 4),
        Status::Succeeded,
        T0 - 2 * 86_400_000,
    )
    .await;
    unreadable(&index, 10, T0).await;
    clock.advance(1_000);
    let page = index
        .recent(&ws(), &alice(), Filter::All, Some(2), None)
        .await
        .unwrap()
        .page;
    assert_eq!(page.cards.len(), 2, "{}", b.name);
    assert!(
        !page.more,
        "{}: nothing lies beyond the 16 markers listed",
        b.name
    );
    // One marker more, older than the rest: now there may be more.
    register_at(
        &index,
        &keys_named("older", 1),
        Status::Running,
        T0 - 4 * 86_400_000,
    )
    .await;
    let page = index
        .recent(&ws(), &alice(), Filter::All, Some(2), None)
        .await
        .unwrap()
        .page;
    assert!(page.more, "{}", b.name);
}
