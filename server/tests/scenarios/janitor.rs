//! The janitor: whole workspaces, every kind of key, several at once.

use crate::common::backends::Backend;
use crate::common::raw::path;
use crate::common::*;
use crate::support::*;
use app::contract::Status;
use pickup::index::ItemId;
use pickup::index::Reason;
use pickup::index::{Clock, ManualClock};
use pickup::index::{SubKey, Workspace};
use std::collections::BTreeSet;

/// The janitor sweeps whole workspaces: expired, superseded, finished long ago, recordless past
/// grace, and dismissals whose marker is gone; a young recordless marker, a live (stalled) item
/// and a live item's dismissal stay. A dry run deletes nothing; two janitors at once are fine.
pub async fn sweeps_workspaces(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, store) = open(b, &clock);
    let reg = |key: &'static str, status: Status| {
        let index = index.clone();
        async move {
            index
                .register(&ws(), &new_item(key, status), &producer("a"))
                .await
                .unwrap()
                .id
        }
    };
    let old = reg("old", Status::Running).await;
    clock.advance(8 * DAY);
    let dup1 = reg("dup", Status::Running).await;
    clock.advance(3 * 60_000); // more than the clock skew apart
    let dup2 = reg("dup", Status::Running).await;
    let failed = reg("failed", Status::Failed).await;
    let ghost = ItemId::new(clock.now_ms(), SubKey::parse("ghost").unwrap()).unwrap();
    store.put(&path(&key::marker(&ws(), &ghost)), "").await;
    let live = reg("live", Status::Running).await;
    let gone = reg("gone", Status::Running).await;
    index.dismiss(&ws(), &alice(), &id_of(&gone)).await.unwrap();
    index.dismiss(&ws(), &alice(), &id_of(&live)).await.unwrap();
    index
        .remove(&ws(), &id_of(&gone), &user("a"))
        .await
        .unwrap();
    clock.advance(25 * HOUR);
    let fresh = ItemId::new(clock.now_ms(), SubKey::parse("fresh").unwrap()).unwrap();
    store.put(&path(&key::marker(&ws(), &fresh)), "").await;
    let beta = Workspace::parse("beta").unwrap();
    index
        .register(&beta, &new_item("x", Status::Running), &producer("a"))
        .await
        .unwrap();

    let mut all: Vec<String> = index
        .workspaces()
        .await
        .unwrap()
        .iter()
        .map(|w| w.to_string())
        .collect();
    all.sort();
    assert_eq!(
        all,
        vec!["acme", "beta"],
        "{}: workspaces with markers",
        b.name
    );

    let mut want = vec![
        (key::marker(&ws(), &id_of(&old)), Reason::Expired),
        (
            key::marker(&ws(), &id_of(&dup1)),
            Reason::Superseded(dup2.clone()),
        ),
        (key::marker(&ws(), &id_of(&failed)), Reason::FinishedLongAgo),
        (key::marker(&ws(), &ghost), Reason::NoRecord),
        (
            key::dismissal(&ws(), &alice(), &id_of(&gone)),
            Reason::OrphanDismissal,
        ),
    ];
    // The dead items' owner markers go with their markers (the ghost never had one).
    for id in [&old, &dup1, &failed] {
        let key = key::owner_marker(&ws(), &user("a"), &id_of(id));
        want.push((key, Reason::OrphanOwnerMarker));
    }
    want.sort_by(|a, b| a.0.cmp(&b.0));
    let before = markers(&index).await;
    let dry = index.sweep(&ws(), true).await.unwrap();
    assert_eq!(dry.deletes, want, "{}: what and why", b.name);
    assert_eq!(dry.markers(), 7);
    assert_eq!(
        markers(&index).await,
        before,
        "{}: a dry run deletes nothing",
        b.name
    );

    let w = ws();
    let (s1, s2) = tokio::join!(index.sweep(&w, false), index.sweep(&w, false));
    let (s1, s2) = (s1.unwrap(), s2.unwrap());
    assert_eq!(
        (s1.failed, s2.failed),
        (0, 0),
        "{}: a second delete is harmless",
        b.name
    );
    let mut left = vec![dup2.clone(), live.clone(), fresh.to_string()];
    left.sort();
    assert_eq!(markers(&index).await, left, "{}", b.name);
    let dismissals: BTreeSet<String> = store.names("ws/acme/dismissed").await.into_iter().collect();
    assert_eq!(
        dismissals,
        BTreeSet::from([format!("alice/{live}")]),
        "{}",
        b.name
    );
    let again = index.sweep(&ws(), false).await.unwrap();
    assert!(again.deletes.is_empty(), "{}: nothing left to do", b.name);
}
