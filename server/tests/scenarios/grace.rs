//! The grace period: a marker whose record has not landed yet (or never will).

use crate::common::backends::Backend;
use crate::common::raw::path;
use crate::common::*;
use crate::support::*;
use app::contract::Filter;
use pickup::index::ItemId;
use pickup::index::ManualClock;
use pickup::index::Reason;
use pickup::index::SubKey;

/// A young marker without its record is neither shown nor deleted, by a read or the janitor;
/// past the grace period it is deleted.
pub async fn recordless_marker(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, store) = open(b, &clock);
    let id = ItemId::new(T0, SubKey::parse("early").unwrap()).unwrap();
    store.put(&path(&key::marker(&ws(), &id)), "").await;
    clock.advance(30_000);
    let read = index
        .recent(&ws(), &alice(), Filter::All, None, None)
        .await
        .unwrap();
    assert!(read.page.cards.is_empty() && !read.page.partial);
    assert!(read.prune.deletes.is_empty(), "{}: young, kept", b.name);
    let sweep = index.sweep(&ws(), false).await.unwrap();
    assert!(
        sweep.deletes.is_empty(),
        "{}: the janitor waits too",
        b.name
    );
    clock.advance(31_000);
    let read = index
        .recent(&ws(), &alice(), Filter::All, None, None)
        .await
        .unwrap();
    assert_eq!(
        read.prune.deletes,
        vec![(key::marker(&ws(), &id), Reason::NoRecord)],
        "{}",
        b.name
    );
    index.apply(&read.prune).await;
    assert!(markers(&index).await.is_empty(), "{}", b.name);
}
