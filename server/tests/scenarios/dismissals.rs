//! Dismissals: a viewer's own fact, "I dismissed this item", that lives as long as the item.

use crate::common::backends::Backend;
use crate::common::*;
use crate::support::*;
use app::contract::{Filter, Status};
use pickup::index::ManualClock;
use pickup::index::Reason;

/// Dismissals hide a card from one viewer only. When the item is removed by its owner, the
/// janitor removes the dismissal; a read that deletes a superseded marker takes the viewer's
/// dismissal of it along; the janitor removes dismissals of markers that are gone.
pub async fn per_viewer_and_cleaned_up(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, store) = open(b, &clock);
    let page = |who: &'static str| {
        let index = index.clone();
        async move {
            index
                .recent(&ws(), &user(who), Filter::All, None, None)
                .await
                .unwrap()
        }
    };
    let a = reg(&index, "a", Status::Failed, "a").await;
    let a_id = id_of(&a.id);
    let k1 = reg(&index, "k", Status::Running, "a").await;
    let k1_id = id_of(&k1.id);
    let r = reg(&index, "r", Status::Running, "a").await;
    let r_id = id_of(&r.id);
    for id in [&a_id, &k1_id, &r_id] {
        index.dismiss(&ws(), &alice(), id).await.unwrap();
    }
    assert!(page("alice").await.page.cards.is_empty(), "{}", b.name);
    assert_eq!(page("bob").await.page.cards.len(), 3, "{}", b.name);

    // r is removed by its owner; its dismissal is now a fact nobody reads: the janitor
    // deletes it (and only it) once it is older than the grace period.
    index.remove(&ws(), &r_id, &user("a")).await.unwrap();
    clock.advance(2 * 60_000);
    let sweep = index.sweep(&ws(), false).await.unwrap();
    assert_eq!(
        sweep.deletes,
        vec![(
            key::dismissal(&ws(), &alice(), &r_id),
            Reason::OrphanDismissal
        )],
        "{}",
        b.name
    );

    // A newer run of k: alice's read deletes the old marker and her dismissal of it.
    clock.advance(3 * 60_000); // more than the clock skew apart
    let k2 = reg(&index, "k", Status::Running, "a").await;
    let read = page("alice").await;
    assert_eq!(shown(&read.page), vec![k2.id.clone()], "{}", b.name);
    assert_eq!(
        read.prune.deletes,
        vec![
            (
                key::marker(&ws(), &k1_id),
                Reason::Superseded(k2.id.clone())
            ),
            (
                key::dismissal(&ws(), &alice(), &k1_id),
                Reason::OrphanDismissal
            )
        ],
        "{}",
        b.name
    );
    index.apply(&read.prune).await;

    // a finished long ago: bob's read deletes its marker; the janitor, alice's dismissal.
    clock.advance(25 * HOUR);
    let read = page("bob").await;
    assert_eq!(
        read.prune.deletes,
        vec![(key::marker(&ws(), &a_id), Reason::FinishedLongAgo)],
        "{}",
        b.name
    );
    index.apply(&read.prune).await;
    let sweep = index.sweep(&ws(), false).await.unwrap();
    // Its owner marker and that of k's older run go too: the reads did not know owners.
    let owner_a = user("a");
    assert_eq!(
        sweep.deletes,
        vec![
            (
                key::dismissal(&ws(), &alice(), &a_id),
                Reason::OrphanDismissal
            ),
            (
                key::owner_marker(&ws(), &owner_a, &a_id),
                Reason::OrphanOwnerMarker
            ),
            (
                key::owner_marker(&ws(), &owner_a, &k1_id),
                Reason::OrphanOwnerMarker
            ),
        ],
        "{}",
        b.name
    );
    assert_eq!(markers(&index).await, vec![k2.id.clone()]);
    assert!(store.names("ws/acme/dismissed").await.is_empty());
}
