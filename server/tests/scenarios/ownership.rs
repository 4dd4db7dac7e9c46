//! Ownership: only the subject that registered an item changes it, and every item is listed
//! under its owner (`ws/{ws}/owners/{user}/`) for "Mine".

use crate::common::backends::Backend;
use crate::common::raw::path;
use crate::common::*;
use crate::support::*;
use app::contract::{Filter, Status};
use pickup::index::IndexError;
use pickup::index::ManualClock;

/// Another subject's update or removal is refused (403) and changes nothing; an update or a
/// removal of an item that is gone is 404, and an update never re-creates its record.
pub async fn only_the_owner(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, _) = open(b, &clock);
    let r = reg(&index, "a", Status::Running, "a").await;
    let id = id_of(&r.id);
    let before = all_keys(&index).await;
    let a = user("a");
    assert_eq!(
        before,
        vec![
            key::marker(&ws(), &id),
            key::item(&ws(), &id),
            key::owner_marker(&ws(), &a, &id),
        ],
        "{}: the item's keys, in key order",
        b.name
    );
    let res = index
        .update(&ws(), &id, &up(Status::Failed, 1.0), &user("mallory"), None)
        .await;
    assert!(
        matches!(res, Err(IndexError::NotOwner)),
        "{}: {res:?}",
        b.name
    );
    let res = index.remove(&ws(), &id, &user("mallory")).await;
    assert!(
        matches!(res, Err(IndexError::NotOwner)),
        "{}: {res:?}",
        b.name
    );
    assert_eq!(all_keys(&index).await, before, "{}", b.name);
    assert_eq!(index.get(&ws(), &id).await.unwrap().0.progress, None);

    index.remove(&ws(), &id, &user("a")).await.unwrap();
    assert!(all_keys(&index).await.is_empty(), "{}", b.name);
    let res = index
        .update(&ws(), &id, &up(Status::Failed, 1.0), &user("a"), None)
        .await;
    assert!(
        matches!(res, Err(IndexError::NotFound)),
        "{}: {res:?}",
        b.name
    );
    let res = index.remove(&ws(), &id, &user("a")).await;
    assert!(
        matches!(res, Err(IndexError::NotFound)),
        "{}: {res:?}",
        b.name
    );
    assert!(
        all_keys(&index).await.is_empty(),
        "{}: nothing re-created",
        b.name
    );
}

/// Items registered before owner markers existed: the janitor writes the missing owner marker,
/// so "Mine" finds them; and an owner marker goes with its item.
pub async fn owner_markers(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, store) = open(b, &clock);
    let a = user("a");
    let r = reg(&index, "old", Status::Running, "a").await;
    let id = id_of(&r.id);
    store
        .delete(&path(&key::owner_marker(&ws(), &a, &id)))
        .await;
    let mine = |index: pickup::index::Index| {
        let a = a.clone();
        async move {
            index
                .recent(&ws(), &a, Filter::Mine, None, None)
                .await
                .unwrap()
                .page
                .cards
                .len()
        }
    };
    assert_eq!(
        mine(index.clone()).await,
        0,
        "{}: no owner marker yet",
        b.name
    );
    let sweep = index.sweep(&ws(), false).await.unwrap();
    assert_eq!(sweep.backfilled, 1, "{}", b.name);
    assert_eq!(
        mine(index.clone()).await,
        1,
        "{}: found after one sweep",
        b.name
    );
    // Finished long ago: the sweep deletes marker, record and owner marker.
    finish(&index, &r.id, Status::Succeeded).await;
    clock.advance(25 * HOUR);
    index.sweep(&ws(), false).await.unwrap();
    let left = store.names("ws/acme/owners").await;
    assert!(left.is_empty(), "{}: {left:?}", b.name);
    assert!(markers(&index).await.is_empty(), "{}", b.name);
}
