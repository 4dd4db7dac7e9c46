//! The marker index on one store's specifics, beside the scenario suite (`tests/scenarios/`,
//! which runs every behaviour on every backend): the design it replaces (a shared list that
//! loses a concurrent registration), a GCS-like store that compares generations, and a model of
//! the whole read path checked by property tests on memory.

use crate::common;

use crate::common::naive::NaiveList;
use crate::common::*;
use app::contract::{Filter, Status};

use pickup::index::ItemId;
use pickup::index::ManualClock;
use pickup::index::UserId;
use std::sync::Arc;

fn alice() -> UserId {
    UserId::parse("alice").unwrap()
}

/// The race the design exists for (reader lists → producer registers X → reader prunes),
/// against a read-modify-written shared list: X is lost. The marker index keeps X on every
/// backend: `tests/scenarios/register.rs`, `a_reader_prune_never_drops_a_concurrent_registration`.
#[tokio::test]
async fn naive_shared_list_loses_a_concurrent_registration() {
    let (a, x) = ("a".to_string(), "x".to_string());
    let naive = NaiveList::new(Arc::new(object_store::memory::InMemory::new()));
    naive.register(a.clone()).await;
    let snapshot = naive.read().await; // reader reads [A]
    naive.register(x.clone()).await; // producer writes [X, A]
    let kept: Vec<String> = snapshot.into_iter().filter(|i| *i != a).collect();
    naive.write(&kept).await; // reader writes back its pruned copy
    assert!(!naive.read().await.contains(&x), "the naive list lost X");
}

mod properties {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// How many runs of a key within the clock skew of its newest are resolved besides it (the
    /// index's `core::plan::RIVALS_PER_KEY`, not on its face): the model's own number, so a
    /// change of it must change the model too.
    const RIVALS_PER_KEY: usize = 4;

    fn status(i: u8) -> Status {
        Status::ALL[i as usize % Status::ALL.len()]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// 7. Through the whole read path: the page is exactly the N newest live items, one per
        /// sub-key (of the runs within the clock skew of its newest, the one in flight, else the one
        /// that last said something), newest
        /// first, and no marker that was shown is planned for deletion. (Six keys and a cap of at least 2 keep every candidate inside
        /// the resolve budget, so the expected page is exact.)
        #[test]
        fn read_path_caps_orders_and_dedupes(items in prop::collection::vec((0u8..6, 0u64..(9 * 24), any::<u8>()), 0..40), cap in 2u32..10) {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                let clock = ManualClock::new(T0);
                let (index, _) = memory_index(&clock);
                // Register oldest first, each at its own time in the past.
                let mut sorted = items.clone();
                sorted.sort_by_key(|(_, age, _)| std::cmp::Reverse(*age));
                let start = T0;
                // Every run of each key: (id, created, status).
                let mut runs: HashMap<String, Vec<(String, u64, Status)>> = HashMap::new();
                let mut offset = 0;
                for (k, age_h, st) in &sorted {
                    let key = format!("k{k}");
                    let created = start - age_h * HOUR + offset;
                    let c = ManualClock::new(created);
                    offset += 1;
                    let at = index.clone().with_clock(Arc::new(c.clone()));
                    let r = at.register(&ws(), &new_item(&key, status(*st)), &producer("a")).await.unwrap();
                    runs.entry(key).or_default().push((r.id, created, status(*st)));
                }
                clock.advance(offset + 1);
                let now = T0 + offset + 1;
                let limits = index.limits();
                let is_live = |created: u64, st: Status| {
                    let age = now - created;
                    age <= limits.ttl_ms && !(st.is_finished() && age > limits.keep_finished_ms)
                };
                // A run's last word is its registration here (nothing updates it later); a
                // running one whose heartbeat is older than `stale_after` is stalled.
                let stalled = |created: u64, st: Status| {
                    st == Status::Running && now - created > limits.stale_after_ms
                };
                let in_flight = |created: u64, st: Status| !st.is_finished() && !stalled(created, st);
                // The model: of a key's runs within the clock skew of its newest (at most
                // 1 + RIVALS_PER_KEY), a live one in flight (not stalled) is shown, else the
                // live one whose last word is the latest.
                let mut want: Vec<String> = runs
                    .values_mut()
                    .filter_map(|runs| {
                        runs.sort_by_key(|(_, created, _)| std::cmp::Reverse(*created));
                        let newest = runs[0].1;
                        runs.iter()
                            .take(1 + RIVALS_PER_KEY)
                            .filter(|(_, c, _)| newest - c <= limits.max_skew_ms)
                            .filter(|(_, c, st)| is_live(*c, *st))
                            .max_by_key(|(_, c, st)| (in_flight(*c, *st), *c))
                            .map(|(id, _, _)| id.clone())
                    })
                    .collect();
                want.sort();
                want.truncate(cap as usize);
                let read = index.recent(&ws(), &alice(), Filter::All, Some(cap), None).await.unwrap();
                let cards = &read.page.cards;
                let got: Vec<String> = cards.iter().map(|c| c.id.clone()).collect();
                prop_assert_eq!(&got, &want, "the page is the N newest live items");
                // A smaller cap (of 2 at least, as above) gives this page's first cards: a
                // browser's widgets share one stream at their largest cap and cut it down to each
                // one's (public/share.js).
                let smaller = index.recent(&ws(), &alice(), Filter::All, Some((cap - 1).max(2)), None).await.unwrap();
                let first: Vec<String> = smaller.page.cards.iter().map(|c| c.id.clone()).collect();
                let smaller_cap = (cap as usize - 1).max(2);
                prop_assert_eq!(&first[..], &got[..got.len().min(smaller_cap)]);
                // Cut down, the page says "more" only where the server's own does; it may say
                // less ("may be more" is the server's guess, and the larger page can rule it out).
                let cut_more = read.page.more || got.len() > smaller_cap;
                prop_assert!(!cut_more || smaller.page.more, "a cut page claims more than the server's");
                for c in cards {
                    prop_assert!(!read.prune.deletes.iter().any(|(k, _)| k.id().unwrap().to_string() == c.id));
                }
                Ok(())
            })?;
        }
    }
}

/// If-Match works where the store compares generations (GCS): the validator handed out as the
/// ETag carries the version, and the update the store receives has it.
#[tokio::test]
async fn if_match_carries_the_version_a_generation_store_needs() {
    use app::contract::ItemUpdate;
    use common::generations::Generations;
    let clock = ManualClock::new(T0);
    // Between the index and the memory store it opens.
    let mut gens = None;
    let index = common::quick(common::index_at("memory://", &clock)).through(|inner| {
        gens = Some(Arc::new(Generations::new(inner)));
        gens.clone().unwrap()
    });
    let gens = gens.unwrap();
    let r = index
        .register(&ws(), &new_item("a", Status::Running), &producer("a"))
        .await
        .unwrap();
    let id = ItemId::parse(&r.id).unwrap();
    let a = UserId::parse("a").unwrap();
    let (_, validator) = index.get(&ws(), &id).await.unwrap();
    let validator = validator.expect("a validator");
    let up = ItemUpdate::new("t", Status::Succeeded);
    let (_, next) = index
        .update(&ws(), &id, &up, &a, Some(validator.clone()))
        .await
        .expect("a conditional update on a generation store");
    let got = gens.updates.lock().unwrap().last().cloned().unwrap();
    assert!(
        got.version.is_some(),
        "the store received the generation: {got:?}"
    );
    // Other bytes than the record holds now: an ambiguous answer is settled by reading back, and
    // the same bytes would count as this write having been applied.
    let other = ItemUpdate::new("t2", Status::Succeeded);
    let stale = index.update(&ws(), &id, &other, &a, Some(validator)).await;
    assert!(
        matches!(stale, Err(pickup::index::IndexError::PreconditionFailed)),
        "{stale:?}"
    );
    index
        .update(&ws(), &id, &up, &a, next)
        .await
        .expect("the validator a PUT answered works for the next one");
    // An unconditional update is conditional on the version just read, generation included.
    index.update(&ws(), &id, &up, &a, None).await.unwrap();
    let bad = index
        .update(&ws(), &id, &up, &a, Some("caf\u{e9}".into()))
        .await;
    assert!(
        matches!(bad, Err(pickup::index::IndexError::BadValidator)),
        "{bad:?}"
    );
}

/// Register one run of `key` at `at_ms` (through an index whose clock says so); its id.
async fn run_at(index: &pickup::index::Index, key: &str, status: Status, at_ms: u64) -> String {
    let at = ManualClock::new(at_ms);
    let then = index.clone().with_clock(Arc::new(at.clone()));
    then.register(&ws(), &new_item(key, status), &producer("a"))
        .await
        .unwrap()
        .id
}

/// A workspace where paging is hard: re-runs of keys far apart (the older run superseded but
/// not yet pruned) and within the clock skew (rivals, one of them shown in place of the
/// newest), items finished long ago, and more live items than any small cap.
async fn seed_for_paging(index: &pickup::index::Index) {
    let s = 1_000;
    for i in 0..14 {
        run_at(
            index,
            &format!("k{i}"),
            Status::Running,
            T0 - (i + 1) * 10 * s,
        )
        .await;
    }
    // Older runs of k0..k3 an hour back: superseded, so never a card of their own.
    for i in 0..4 {
        run_at(index, &format!("k{i}"), Status::Running, T0 - HOUR - i * s).await;
    }
    // Rivals (1 s older than the newest run): both in flight, the newest is shown (k4, k5);
    // the newest finished and the rival in flight, the rival is shown (k6, k7).
    for i in 4..8 {
        run_at(
            index,
            &format!("k{i}"),
            Status::Running,
            T0 - (i + 1) * 10 * s - s,
        )
        .await;
    }
    for i in [6, 7] {
        let newest = ItemId::new(
            T0 - (i + 1) * 10 * s,
            pickup::index::SubKey::parse(&format!("k{i}")).unwrap(),
        )
        .unwrap();
        common::finish(index, &newest.to_string(), Status::Succeeded).await;
    }
    // m's newest run finished, its rival in flight is shown, and n sorts between them.
    run_at(index, "m", Status::Running, T0 - 95 * s).await;
    run_at(index, "n", Status::Running, T0 - 96 * s).await;
    run_at(index, "m", Status::Running, T0 - 97 * s).await;
    let m = ItemId::new(T0 - 95 * s, pickup::index::SubKey::parse("m").unwrap()).unwrap();
    common::finish(index, &m.to_string(), Status::Succeeded).await;
    // Finished long ago: dead, never shown.
    for i in 0..3 {
        run_at(
            index,
            &format!("old{i}"),
            Status::Succeeded,
            T0 - 3 * 86_400_000 + i,
        )
        .await;
    }
}

/// "Show older": for every cap, paging with `before` = the last card's id yields pages that
/// are disjoint, ordered, at most `cap` long, and together exactly the one page a big cap
/// shows, on a store that lists in key order and on one that does not; whether or not the
/// earlier pages' prunes were applied in between.
#[tokio::test]
async fn older_pages_are_disjoint_ordered_and_cover_what_a_big_cap_shows() {
    for store in ["memory", "file"] {
        for apply in [false, true] {
            for cap in 1..=6u32 {
                let clock = ManualClock::new(T0);
                let (index, _dir) = match store {
                    "memory" => (memory_index(&clock).0, None),
                    _ => {
                        let (index, _, dir) = file_index(&clock);
                        (index, Some(dir))
                    }
                };
                seed_for_paging(&index).await;
                let all = index
                    .recent(&ws(), &alice(), Filter::All, Some(50), None)
                    .await
                    .unwrap()
                    .page;
                assert!(!all.more);
                assert_eq!(all.cards.len(), 16, "one card per live key");
                let all: Vec<String> = all.cards.iter().map(|c| c.id.clone()).collect();

                let mut paged: Vec<String> = Vec::new();
                let mut before: Option<ItemId> = None;
                for _ in 0..20 {
                    let read = index
                        .recent(&ws(), &alice(), Filter::All, Some(cap), before.as_ref())
                        .await
                        .unwrap();
                    if apply {
                        index.apply(&read.prune).await;
                    }
                    let ids: Vec<String> = read.page.cards.iter().map(|c| c.id.clone()).collect();
                    let what = format!("{store}, cap {cap}, prunes applied: {apply}");
                    assert!(ids.len() <= cap as usize, "{what}: {ids:?}");
                    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{what}: {ids:?}");
                    if let (Some(last), Some(first)) = (paged.last(), ids.first()) {
                        assert!(last < first, "{what}: pages overlap or go back");
                    }
                    paged.extend(ids);
                    if !read.page.more {
                        break;
                    }
                    before = Some(ItemId::parse(paged.last().expect("a page with more")).unwrap());
                }
                assert_eq!(paged, all, "{store}, cap {cap}, prunes applied: {apply}");
            }
        }
    }
}

/// The key's newest run was shown before the cursor: its older runs after the cursor (one
/// superseded, one a rival) are no cards of their own. But a rival shown in place of its
/// key's newest run (the newest finished, the rival in flight) that sorts after the cursor is
/// shown after it, exactly once.
#[tokio::test]
async fn a_later_page_shows_no_older_run_of_a_key_already_shown() {
    let clock = ManualClock::new(T0);
    let (index, _) = memory_index(&clock);
    let a = run_at(&index, "a", Status::Running, T0 - 1_000).await;
    let b = run_at(&index, "b", Status::Running, T0 - 1_500).await;
    let a_rival = run_at(&index, "a", Status::Running, T0 - 1_800).await;
    let a_old = run_at(&index, "a", Status::Running, T0 - HOUR).await;
    let c = run_at(&index, "c", Status::Running, T0 - 2 * HOUR).await;
    let page = |before: Option<String>| {
        let index = index.clone();
        async move {
            let before = before.map(|b| ItemId::parse(&b).unwrap());
            let read = index
                .recent(&ws(), &alice(), Filter::All, Some(2), before.as_ref())
                .await
                .unwrap();
            let ids: Vec<String> = read.page.cards.iter().map(|c| c.id.clone()).collect();
            (ids, read.page.more)
        }
    };
    assert_eq!(page(None).await, (vec![a.clone(), b.clone()], true));
    assert_eq!(
        page(Some(b.clone())).await,
        (vec![c.clone()], false),
        "neither {a_rival} nor {a_old}"
    );
    // The newest run of a finishes: its rival in flight is a's card, and it sorts after b.
    common::finish(&index, &a, Status::Succeeded).await;
    assert_eq!(page(None).await, (vec![b.clone(), a_rival.clone()], true));
    assert_eq!(page(Some(a_rival.clone())).await, (vec![c.clone()], false));
    // With a cap of 1 the first page is b (the rival sorts after it) and the second a's rival.
    let read = index
        .recent(&ws(), &alice(), Filter::All, Some(1), None)
        .await
        .unwrap();
    assert_eq!(read.page.cards[0].id, b);
    let after_b = ItemId::parse(&b).unwrap();
    let read = index
        .recent(&ws(), &alice(), Filter::All, Some(1), Some(&after_b))
        .await
        .unwrap();
    assert_eq!(read.page.cards[0].id, a_rival);
}
