//! Issue 25.5: the read budget is spent on keys that can still become cards, so no page is
//! empty while live items exist.

use crate::common::backends::Backend;
use crate::common::*;
use crate::support::*;
use app::contract::{Filter, Status};
use pickup::index::{ItemId, ManualClock};

/// 17 keys, each with a first run still running (and heartbeating) and a second run that
/// failed, within the skew of it: every key shows its running first run, whose id sorts
/// after every key's second run. A page of 8 resolves every key (one resolve each, its rival
/// with it) and shows 8 cards; resolving by record reads ran out at 12 keys and showed none.
pub async fn no_empty_page_while_live_items_exist(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, _) = open(b, &clock);
    const KEYS: usize = 17;
    let mut firsts = Vec::new();
    for i in 0..KEYS {
        firsts.push(reg(&index, &format!("k{i}"), Status::Running, "alice").await);
        clock.advance(1);
    }
    for i in 0..KEYS {
        let second = reg(&index, &format!("k{i}"), Status::Running, "alice").await;
        finish(&index, &second.id, Status::Failed).await;
        clock.advance(1);
    }
    clock.advance(1_000);
    for first in &firsts {
        let id = ItemId::parse(&first.id).unwrap();
        index
            .update(&ws(), &id, &up(Status::Running, 0.5), &alice(), None)
            .await
            .unwrap();
    }
    let read = index
        .recent(&ws(), &alice(), Filter::All, Some(8), None)
        .await
        .unwrap();
    let want: Vec<String> = firsts.iter().rev().take(8).map(|r| r.id.clone()).collect();
    assert_eq!(
        shown(&read.page),
        want,
        "{}: the 8 newest running runs",
        b.name
    );
    assert!(read.page.more, "{}", b.name);
}
