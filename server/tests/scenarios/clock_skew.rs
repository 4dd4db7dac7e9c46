//! Clocks: servers may disagree by up to the allowed skew; a reader whose clock is further off
//! than that deletes nothing by age.

use crate::common::backends::Backend;
use crate::common::*;
use crate::support::*;
use app::contract::{Filter, Status};
use pickup::index::Reason;
use pickup::index::{Clock, ManualClock, SystemClock};
use std::sync::Arc;

/// Clock skew between servers: server A runs 2 s fast. A run of key K made on A and cancelled,
/// then a re-run of K made on B a second later (real time): the re-run is live and shown, the
/// cancelled run is hidden (kept until the re-run finishes, or the newer run supersedes it by
/// name), and nothing live is deleted as superseded.
pub async fn fast_producer_clock(b: &Backend) {
    let real = ManualClock::new(T0);
    let (reader, _) = open(b, &real);
    let fast = ManualClock::new(T0 + 2_000);
    let a = reader.clone().with_clock(Arc::new(fast.clone()));
    let b_server = reader.clone();
    let first = reg(&a, "k", Status::Running, "a").await;
    finish(&a, &first.id, Status::Cancelled).await;
    real.advance(1_000);
    fast.advance(1_000);
    let rerun = reg(&b_server, "k", Status::Running, "a").await;
    assert!(first.id < rerun.id, "the cancelled run's id looks newer");
    for filter in [Filter::All, Filter::Mine] {
        let read = reader
            .recent(&ws(), &user("a"), filter, None, None)
            .await
            .unwrap();
        let shown: Vec<&str> = read.page.cards.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            shown,
            vec![rerun.id.as_str()],
            "{}: {filter:?}: the live re-run is shown",
            b.name
        );
        assert!(
            read.prune
                .deletes
                .iter()
                .all(|(k, _)| k.id().unwrap().to_string() != rerun.id),
            "{}: {filter:?}: the live re-run is not deleted",
            b.name
        );
        // Nor is the cancelled run: by the fast clock it finished after the re-run's last
        // word, and a finished result is never deleted in favour of an older one.
        assert!(
            read.prune
                .deletes
                .iter()
                .all(|(k, _)| k.id().unwrap().to_string() != first.id),
            "{}: {filter:?}",
            b.name
        );
    }
    // The janitor agrees.
    let sweep = reader.sweep(&ws(), true).await.unwrap();
    assert!(sweep
        .deletes
        .iter()
        .all(|(k, _)| k.id().unwrap().to_string() != rerun.id));
    // More than the skew apart, the older run is superseded by name, whatever its status.
    real.advance(3 * 60_000);
    let third = reg(&b_server, "k", Status::Running, "a").await;
    let read = reader
        .recent(&ws(), &alice(), Filter::All, None, None)
        .await
        .unwrap();
    assert_eq!(read.page.cards[0].id, third.id, "{}", b.name);
    assert!(
        read.prune
            .deletes
            .iter()
            .any(|(k, r)| k.id().unwrap().to_string() == rerun.id
                && *r == Reason::Superseded(third.id.clone())),
        "{}",
        b.name
    );
}

/// A reader whose clock runs a day fast deletes nothing by age: its clock disagrees with the
/// store's (the store's own time, read from an object's last-modified) by more than the skew.
/// The same reader with a true clock deletes what is really expired.
pub async fn fast_reader_clock(b: &Backend) {
    let now = SystemClock.now_ms();
    let old = ManualClock::new(now - 8 * DAY);
    let (index, _) = open(b, &old);
    let gone = reg(&index, "old", Status::Running, "a").await;
    let reader = |clock: &ManualClock| {
        index
            .clone()
            .with_clock(Arc::new(clock.clone()))
            .with_clock_check()
    };
    // A day fast: the week-old item looks 9 days old, and so would every item a day younger.
    let fast = reader(&ManualClock::new(now + DAY));
    let read = fast
        .recent(&ws(), &alice(), Filter::All, None, None)
        .await
        .unwrap();
    assert_eq!(read.prune.deletes.len(), 1, "planned as expired by name");
    let report = fast.apply(&read.prune).await;
    assert_eq!(
        (report.total(), report.held),
        (0, 1),
        "{}: held, not deleted",
        b.name
    );
    let sweep = fast.sweep(&ws(), false).await.unwrap();
    assert_eq!(
        (sweep.deleted.values().sum::<usize>(), sweep.held),
        (0, 2),
        "{}: the marker and its owner marker held",
        b.name
    );
    assert_eq!(markers(&index).await, vec![gone.id.clone()], "{}", b.name);
    // The same reader with the store's time deletes it.
    let true_clock = reader(&ManualClock::new(now));
    let read = true_clock
        .recent(&ws(), &alice(), Filter::All, None, None)
        .await
        .unwrap();
    let report = true_clock.apply(&read.prune).await;
    assert_eq!(
        (
            report.held,
            report.deleted.get(&pickup::index::KeyKind::Marker)
        ),
        (0, Some(&1)),
        "{}",
        b.name
    );
    assert!(markers(&index).await.is_empty(), "{}", b.name);
}
