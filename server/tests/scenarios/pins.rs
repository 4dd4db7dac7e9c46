//! Pins: a viewer's own fact, "keep this at the top of my list", one empty key each under the
//! viewer's name, that outlasts keep-finished and ends with the item's record.

use crate::common::backends::Backend;
use crate::common::fault::Op;
use crate::common::*;
use crate::support::*;
use app::contract::{Filter, RecentPage, Status};
use pickup::index::{IndexError, ManualClock, Reason, MAX_PINS};

fn pinned(page: &RecentPage) -> Vec<String> {
    page.cards
        .iter()
        .filter(|c| c.pinned)
        .map(|c| c.id.clone())
        .collect()
}

/// A pin is above the cap's N others, in Mine and Everyone, for its viewer alone, under the
/// viewer's own key; the one past the most gets an error and writes nothing; unpinned, the item
/// is one of the others again.
pub async fn at_the_top_for_their_viewer_alone(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, raw) = open(b, &clock);
    let page = |who: &'static str, filter: Filter| {
        let index = index.clone();
        async move {
            let read = index.recent(&ws(), &user(who), filter, Some(2), None).await;
            read.unwrap().page
        }
    };
    let mut ids = Vec::new();
    for key in ["a", "b", "c", "d"] {
        ids.push(id_of(&reg(&index, key, Status::Running, "bot").await.id));
        clock.advance(1);
    }
    // The oldest, below the cap of 2.
    index.pin(&ws(), &alice(), &ids[0]).await.unwrap();
    index.pin(&ws(), &alice(), &ids[0]).await.unwrap();
    assert_eq!(
        raw.names("ws/acme/pinned/alice").await,
        vec![ids[0].to_string()],
        "{}: one empty key, under the viewer's name",
        b.name
    );
    let all = page("alice", Filter::All).await;
    let want = [&ids[0], &ids[3], &ids[2]].map(|id| id.to_string());
    assert_eq!(shown(&all), want, "{}: the pin, then the cap's two", b.name);
    assert_eq!(pinned(&all), vec![ids[0].to_string()], "{}", b.name);
    assert!(all.more, "{}", b.name);
    // In Mine too, though the bot owns it.
    let mine = page("alice", Filter::Mine).await;
    assert_eq!(shown(&mine), vec![ids[0].to_string()], "{}", b.name);
    let bobs = page("bob", Filter::All).await;
    assert_eq!(
        shown(&bobs),
        [&ids[3], &ids[2]].map(|id| id.to_string()),
        "{}",
        b.name
    );
    assert!(pinned(&bobs).is_empty(), "{}", b.name);
    // The next page leaves the pin out: it is on the first.
    let last = id_of(&all.cards[2].id);
    let next = index
        .recent(&ws(), &alice(), Filter::All, Some(2), Some(&last))
        .await
        .unwrap()
        .page;
    assert_eq!(shown(&next), vec![ids[1].to_string()], "{}", b.name);

    // At most MAX_PINS: the one after is refused and nothing is written.
    for i in 0..MAX_PINS + 1 {
        let id = id_of(
            &reg(&index, &format!("p{i}"), Status::Queued, "bot")
                .await
                .id,
        );
        clock.advance(1);
        let res = index.pin(&ws(), &alice(), &id).await;
        match i + 1 {
            n if n < MAX_PINS => res.unwrap(),
            _ => assert!(
                matches!(res, Err(IndexError::TooManyPins(MAX_PINS))),
                "{}: pin {}: {res:?}",
                b.name,
                i + 2
            ),
        }
    }
    assert_eq!(raw.names("ws/acme/pinned/alice").await.len(), MAX_PINS);
    let gone = pickup::index::ItemId::parse(&format!("{}_zz", T0 - 1000)).unwrap();
    assert!(matches!(
        index.pin(&ws(), &user("bob"), &gone).await,
        Err(IndexError::NotFound)
    ));

    index.unpin(&ws(), &alice(), &ids[0]).await.unwrap();
    index.unpin(&ws(), &alice(), &ids[0]).await.unwrap();
    let all = page("alice", Filter::All).await;
    assert!(
        !all.cards.iter().any(|c| c.id == ids[0].to_string()),
        "{}",
        b.name
    );
}

/// A pinned item finished past keep-finished stays on its pinner's list (not on anyone
/// else's): its marker goes, its record stays while it is pinned. Unpinned, the janitor takes
/// the record; a pin whose record is gone goes only past the grace period plus the skew, and
/// never on a listing error.
pub async fn outlast_keep_finished_and_end_with_the_record(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, faults, _) = open_faulty(b, &clock);
    let done = reg(&index, "done", Status::Succeeded, "bot").await;
    let done_id = id_of(&done.id);
    let other = reg(&index, "other", Status::Succeeded, "bot").await;
    index.pin(&ws(), &alice(), &done_id).await.unwrap();
    clock.advance(25 * HOUR);
    let read = |who: &'static str| {
        let index = index.clone();
        async move {
            let (ws, who) = (ws(), user(who));
            index
                .recent(&ws, &who, Filter::All, None, None)
                .await
                .unwrap()
        }
    };
    let bobs = read("bob").await;
    assert!(bobs.page.cards.is_empty(), "{}", b.name);
    index.apply(&bobs.prune).await;
    assert_eq!(markers(&index).await, Vec::<String>::new(), "{}", b.name);
    let alices = read("alice").await.page;
    assert_eq!(
        shown(&alices),
        vec![done.id.clone()],
        "{}: still pinned",
        b.name
    );
    assert_eq!(alices.cards[0].status, Status::Succeeded);
    // The read took the other's record with its marker; the janitor keeps the pinned one (and
    // takes the owner markers the read did not know of).
    let sweep = index.sweep(&ws(), false).await.unwrap();
    let bots = user("bot");
    let mut want = vec![
        (
            key::owner_marker(&ws(), &bots, &done_id),
            Reason::OrphanOwnerMarker,
        ),
        (
            key::owner_marker(&ws(), &bots, &id_of(&other.id)),
            Reason::OrphanOwnerMarker,
        ),
    ];
    want.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(sweep.deletes, want, "{}", b.name);
    assert_eq!(shown(&read("alice").await.page), vec![done.id.clone()]);

    // A listing that fails deletes nothing; unpinned, the record goes.
    index.unpin(&ws(), &alice(), &done_id).await.unwrap();
    faults.fail(Op::List, "ws/*/pinned");
    assert!(index.sweep(&ws(), false).await.is_err(), "{}", b.name);
    faults.heal();
    let sweep = index.sweep(&ws(), false).await.unwrap();
    assert_eq!(
        sweep.deletes,
        vec![(key::item(&ws(), &done_id), Reason::OrphanRecord)],
        "{}",
        b.name
    );

    // A pin of an item removed by its owner goes once past the grace period plus the skew.
    let removed = id_of(&reg(&index, "gone", Status::Running, "bot").await.id);
    index.pin(&ws(), &alice(), &removed).await.unwrap();
    index.remove(&ws(), &removed, &user("bot")).await.unwrap();
    assert!(read("alice").await.page.cards.is_empty(), "{}", b.name);
    let sweep = index.sweep(&ws(), false).await.unwrap();
    assert!(
        sweep.deletes.is_empty(),
        "{}: young: {:?}",
        b.name,
        sweep.deletes
    );
    clock.advance(4 * 60_000);
    let sweep = index.sweep(&ws(), false).await.unwrap();
    assert_eq!(
        sweep.deletes,
        vec![(key::pin(&ws(), &alice(), &removed), Reason::OrphanPin)],
        "{}",
        b.name
    );
}
