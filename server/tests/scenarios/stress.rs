//! Test 8 of the marker-index issue. Stress on the local file system: 64 concurrent producers × 100 registrations while 4
//! readers load and prune in a loop. Every registered item must still be listed at the end.
//! The same workload against the naive read-modify-written list reports how many it lost.
//!
//! The figures are printed (`cargo test --test scenarios stress:: -- --nocapture`).

use crate::common::naive::NaiveList;
use crate::common::*;
use app::contract::{Filter, Status};
use pickup::index::ManualClock;
use pickup::index::UserId;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

const PRODUCERS: usize = 64;
const PER_PRODUCER: usize = 100;
const READERS: usize = 4;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn marker_index_loses_nothing_under_concurrent_load() {
    let clock = ManualClock::new(T0);
    let (index, _, _dir) = file_index(&clock);
    // A finished item is dead as soon as the clock moves on, so half of what the producers
    // register is dead on arrival, interleaved by age with the live half: the readers prune
    // among the newest items, right where the producers write.
    let limits = index.limits();
    let index = index.with_limits(pickup::index::Limits {
        keep_finished_ms: 0,
        ..limits
    });

    let done = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicUsize::new(0));
    let pruned = Arc::new(AtomicUsize::new(0));
    // Producers wait half-way until a reader has pruned: pruning provably overlaps registering.
    let (first_prune, _) = tokio::sync::watch::channel(false);
    let first_prune = Arc::new(first_prune);
    let started = Instant::now();
    let readers: Vec<_> = (0..READERS)
        .map(|r| {
            let (index, done, reads, pruned) =
                (index.clone(), done.clone(), reads.clone(), pruned.clone());
            let first_prune = first_prune.clone();
            tokio::spawn(async move {
                let viewer = UserId::parse(&format!("reader{r}")).unwrap();
                // Bounded: at most 10,000 reads, and they stop when the producers are done.
                for _ in 0..10_000 {
                    if done.load(Ordering::SeqCst) {
                        break;
                    }
                    let read = index
                        .recent(&ws(), &viewer, Filter::All, None, None)
                        .await
                        .unwrap();
                    let n = index.apply(&read.prune).await.total();
                    pruned.fetch_add(n, Ordering::SeqCst);
                    if n > 0 {
                        first_prune.send_replace(true);
                    }
                    reads.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let (index, clock) = (index.clone(), clock.clone());
            let mut first_prune = first_prune.subscribe();
            tokio::spawn(async move {
                let (mut live, mut dead) = (Vec::new(), Vec::new());
                for i in 0..PER_PRODUCER {
                    if i == PER_PRODUCER / 2 {
                        let pruned = first_prune.wait_for(|p| *p);
                        tokio::time::timeout(std::time::Duration::from_secs(120), pruned)
                            .await
                            .expect("no reader pruned a dead item while producers registered")
                            .unwrap();
                    }
                    let status = if i % 2 == 0 {
                        Status::Running
                    } else {
                        Status::Succeeded
                    };
                    let item = new_item(&format!("p{p}-{i}"), status);
                    let id = index
                        .register(&ws(), &item, &producer("producer"))
                        .await
                        .unwrap()
                        .id;
                    if status == Status::Running {
                        live.push(id)
                    } else {
                        dead.push(id)
                    }
                    clock.advance(1);
                }
                (live, dead)
            })
        })
        .collect();
    let (mut live, mut dead) = (HashSet::new(), HashSet::new());
    for p in producers {
        let (l, d) = p.await.unwrap();
        live.extend(l);
        dead.extend(d);
    }
    done.store(true, Ordering::SeqCst);
    for r in readers {
        r.await.unwrap();
    }
    let elapsed = started.elapsed();

    let listed: HashSet<String> = markers(&index).await.into_iter().collect();
    let lost = live.difference(&listed).count();
    let dead_pruned = dead.difference(&listed).count();
    eprintln!(
        "stress, marker index (local files): {} registrations by {PRODUCERS} producers ({} live, {} dead on arrival), {} reads by {READERS} readers, {} keys pruned during the run ({dead_pruned} dead markers gone), {lost} live lost, {:.1} s",
        live.len() + dead.len(),
        live.len(),
        dead.len(),
        reads.load(Ordering::SeqCst),
        pruned.load(Ordering::SeqCst),
        elapsed.as_secs_f64()
    );
    assert_eq!(live.len() + dead.len(), PRODUCERS * PER_PRODUCER);
    assert_eq!(lost, 0, "every live item is still listed");
    assert!(
        reads.load(Ordering::SeqCst) > 0,
        "readers ran during the burst"
    );
    assert!(
        dead_pruned > 0 && pruned.load(Ordering::SeqCst) >= dead_pruned,
        "the readers pruned dead items while producers registered"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn naive_shared_list_loses_registrations_under_the_same_load() {
    let dir = tempfile::tempdir().unwrap();
    let store =
        Arc::new(object_store::local::LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let list = Arc::new(NaiveList::new(store));
    let dead: HashSet<String> = (0..200).map(|i| format!("old-{i}")).collect();
    list.write(&dead.iter().cloned().collect::<Vec<_>>()).await;
    let dead = Arc::new(dead);

    let done = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let readers: Vec<_> = (0..READERS)
        .map(|_| {
            let (list, done, dead) = (list.clone(), done.clone(), dead.clone());
            tokio::spawn(async move {
                for _ in 0..10_000 {
                    if done.load(Ordering::SeqCst) {
                        break;
                    }
                    list.prune(|id| dead.contains(id)).await;
                }
            })
        })
        .collect();
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let list = list.clone();
            tokio::spawn(async move {
                for i in 0..PER_PRODUCER {
                    list.register(format!("p{p}-{i}")).await;
                }
            })
        })
        .collect();
    for p in producers {
        p.await.unwrap();
    }
    done.store(true, Ordering::SeqCst);
    for r in readers {
        r.await.unwrap();
    }
    let listed: HashSet<String> = list.read().await.into_iter().collect();
    let registered = PRODUCERS * PER_PRODUCER;
    let kept = (0..PRODUCERS)
        .flat_map(|p| (0..PER_PRODUCER).map(move |i| format!("p{p}-{i}")))
        .filter(|id| listed.contains(id))
        .count();
    eprintln!(
        "stress, naive shared list (local files): {registered} registrations, {} lost, {:.1} s",
        registered - kept,
        started.elapsed().as_secs_f64()
    );
    assert!(
        kept < registered,
        "the read-modify-written list drops concurrent registrations"
    );
}
