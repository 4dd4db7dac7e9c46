//! Live streams end to end within the crate: a watcher over an index whose store fails on
//! demand (the tests' fault layer, `crate::testing::fault`), as a subscriber sees it.

use super::{Event, Live, LiveConfig, StreamLimits, Subscription};
use crate::index::{Index, Limits, ManualClock, Producer, UserId, Workspace};
use crate::testing::fault::{FaultStore, Op};
use app::contract::{Filter, NewItem, Status};
use std::sync::Arc;
use std::time::Duration;

async fn next(sub: &mut Subscription) -> Event {
    let next = tokio::time::timeout(Duration::from_secs(20), sub.next()).await;
    next.expect("an event in time").expect("an event")
}

/// A watcher reads a record when a page needs it, not at its start: one the store cannot read
/// then makes the stream say `unavailable`, never a page without its card; once the store
/// reads it again (a later turn), the page has every card.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_a_live_page_cannot_read_is_unavailable_never_a_missing_card() {
    let clock = Arc::new(ManualClock::new(1_800_000_000_000));
    let mut faults = None;
    let index = Index::open("memory://", Limits::default(), 8, clock)
        .unwrap()
        .through(|inner| {
            let f = Arc::new(FaultStore::new(inner));
            faults = Some(f.clone());
            f
        });
    let faults = faults.unwrap();
    let ws = Workspace::parse("acme").unwrap();
    let ada = Producer {
        user: UserId::parse("ada").unwrap(),
        name: "ADA".into(),
    };
    for i in 0..12 {
        let new = NewItem {
            key: format!("k{i}"),
            title: format!("item k{i}"),
            status: Some(Status::Running),
            ..NewItem::default()
        };
        index.register(&ws, &new, &ada).await.unwrap();
    }
    faults.fail(Op::Get, "ws/acme/items/");
    let config = LiveConfig {
        every: Duration::from_millis(20),
        reconcile_every: Duration::from_secs(3600),
        reconcile_ceiling: Duration::from_secs(3600),
        bus: None,
        limits: StreamLimits {
            server: 4,
            workspace: 4,
            viewer: 4,
        },
    };
    let live = Live::new(Arc::new(index), config).unwrap();
    let mut subs = live
        .subscribe(&ws, &ada.user, &[(Filter::All, Some(10))])
        .unwrap();
    assert_eq!(next(&mut subs[0]).await, Event::Unavailable);
    faults.fail_clear();
    let Event::Page(page) = next(&mut subs[0]).await else {
        panic!("a page once the records read");
    };
    assert_eq!(
        (page.cards.len(), page.more, page.partial),
        (10, true, false)
    );
    live.stop();
}
