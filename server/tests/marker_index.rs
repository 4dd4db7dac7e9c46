//! The marker index on one store's specifics, beside the scenario suite (`tests/scenarios/`,
//! which runs every behaviour on every backend): the design it replaces (a shared list that
//! loses a concurrent registration), a GCS-like store that compares generations, and a model of
//! the whole read path checked by property tests on memory.

mod common;

use app::model::{Filter, Status};
use common::naive::NaiveList;
use common::*;

use pickup::clock::ManualClock;
use pickup::id::ItemId;
use pickup::names::UserId;
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

    fn status(i: u8) -> Status {
        Status::ALL[i as usize % Status::ALL.len()]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// 7. Through the whole read path: the page is exactly the N newest live items, one per
        /// sub-key (of the runs within the clock skew of its newest, the one in flight), newest
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
                    let r = at.register(&ws(), &new_item(&key, status(*st)), owner("a")).await.unwrap();
                    runs.entry(key).or_default().push((r.id, created, status(*st)));
                }
                clock.advance(offset + 1);
                let now = T0 + offset + 1;
                let limits = index.limits;
                let is_live = |created: u64, st: Status| {
                    let age = now - created;
                    age <= limits.ttl_ms && !(st.is_finished() && age > limits.keep_finished_ms)
                };
                // The model: of a key's runs within the clock skew of its newest (at most
                // 1 + RIVALS_PER_KEY), the live one in flight is shown, else the newest live one.
                let mut want: Vec<String> = runs
                    .values_mut()
                    .filter_map(|runs| {
                        runs.sort_by_key(|(_, created, _)| std::cmp::Reverse(*created));
                        let newest = runs[0].1;
                        runs.iter()
                            .take(1 + pickup::plan::RIVALS_PER_KEY)
                            .filter(|(_, c, _)| newest - c <= limits.max_skew_ms)
                            .filter(|(_, c, st)| is_live(*c, *st))
                            .min_by_key(|(id, _, st)| (st.is_finished(), id.clone()))
                            .map(|(id, _, _)| id.clone())
                    })
                    .collect();
                want.sort();
                want.truncate(cap as usize);
                let read = index.recent(&ws(), &alice(), Filter::All, Some(cap)).await.unwrap();
                let cards = &read.page.cards;
                let got: Vec<String> = cards.iter().map(|c| c.id.clone()).collect();
                prop_assert_eq!(&got, &want, "the page is the N newest live items");
                for c in cards {
                    prop_assert!(!read.prune.deletes.iter().any(|(k, _)| k.id().to_string() == c.id));
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
    use common::generations::Generations;
    use pickup::record::ItemUpdate;
    let clock = ManualClock::new(T0);
    let gens = Arc::new(Generations::new(Arc::new(
        object_store::memory::InMemory::new(),
    )));
    let index = common::index_on(gens.clone(), pickup::store::ListOrder::Sorted, &clock);
    let r = index
        .register(&ws(), &new_item("a", Status::Running), owner("a"))
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
    let stale = index.update(&ws(), &id, &up, &a, Some(validator)).await;
    assert!(
        matches!(stale, Err(pickup::error::Error::PreconditionFailed)),
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
        matches!(bad, Err(pickup::error::Error::BadValidator(_))),
        "{bad:?}"
    );
}
