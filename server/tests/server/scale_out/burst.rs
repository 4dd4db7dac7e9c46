//! Phase 2 of a scale-out run: producers register while readers read and pruning overlaps.

use super::*;

// ---- phase 2: producers register while readers read and pruning overlaps ---------------------

/// What the burst did and saw.
pub(super) struct Burst {
    pub(super) ledger: Ledger,
    pub(super) started: Instant,
    /// How long the producers took.
    pub(super) took: Duration,
    /// When readers, pruner and watcher had stopped, from `started`.
    pub(super) wound_down: Duration,
    pub(super) reads: [usize; 2],
    pub(super) partial_pages: usize,
    pub(super) prune_runs: usize,
    pub(super) prune_deleted: usize,
    pub(super) watch_rounds: usize,
    /// Live markers missing from a listing taken after their registration was answered.
    pub(super) missing_during: Vec<String>,
}

/// Readers, a `pickup prune` loop and a watcher run from the start until the producers are
/// done; the producers wait half-way until the watcher has seen a dead item pruned.
pub(super) async fn burst(d: &Deployment) -> Burst {
    let started = Instant::now();
    let done = Arc::new(AtomicBool::new(false));
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let reads = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let partial_pages = Arc::new(AtomicUsize::new(0));
    let (pruned_tx, pruned_rx) = watch::channel(false);

    let readers = readers(d, &done, &reads, &partial_pages);
    let pruner = pruner(d, &done);
    let watcher = watcher(d, &done, &ledger, pruned_tx);
    let producers = producers(d, &ledger, pruned_rx);
    for p in producers {
        p.await.unwrap();
    }
    let took = started.elapsed();
    done.store(true, Ordering::SeqCst);
    for r in readers {
        r.await.unwrap();
    }
    let (prune_runs, prune_deleted) = pruner.await.unwrap();
    let (watch_rounds, missing_during) = watcher.await.unwrap();
    Burst {
        ledger: Arc::try_unwrap(ledger).ok().unwrap().into_inner().unwrap(),
        started,
        took,
        wound_down: started.elapsed(),
        reads: [
            reads[0].load(Ordering::SeqCst),
            reads[1].load(Ordering::SeqCst),
        ],
        partial_pages: partial_pages.load(Ordering::SeqCst),
        prune_runs,
        prune_deleted,
        watch_rounds,
        missing_during,
    }
}

/// Readers on both servers ask for the widget's page of 8 until `done`: every page newest
/// first, one card per key; partial pages are counted. Every read prunes what it found dead.
fn readers(
    d: &Deployment,
    done: &Arc<AtomicBool>,
    reads: &Arc<[AtomicUsize; 2]>,
    partial: &Arc<AtomicUsize>,
) -> Vec<JoinHandle<()>> {
    (0..2 * READERS_PER_SERVER)
        .map(|r| {
            let (api, servers, token, done, reads, partial) = (
                d.api.clone(),
                d.bases.clone(),
                d.reader_token.clone(),
                done.clone(),
                reads.clone(),
                partial.clone(),
            );
            tokio::spawn(async move {
                let s = r % 2;
                for n in 0..20_000 {
                    if done.load(Ordering::SeqCst) {
                        break;
                    }
                    let ws = if n % 4 == 3 { WS_SMALL } else { WS };
                    // The widget's default page of 8 cards, as the widget asks for it.
                    let page = api.recent(&servers[s], &token, ws, 8).await;
                    let ids = card_ids(&page);
                    assert!(ids.windows(2).all(|w| w[0] < w[1]), "newest first: {ids:?}");
                    let keys: HashSet<&str> = page["cards"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|c| c["key"].as_str().unwrap())
                        .collect();
                    assert_eq!(keys.len(), ids.len(), "one card per key");
                    if page["partial"].as_bool() != Some(false) {
                        partial.fetch_add(1, Ordering::SeqCst);
                    }
                    reads[s].fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            })
        })
        .collect()
}

/// `pickup prune` of both workspaces in a loop beside the servers' janitors, until `done`:
/// (runs, keys deleted).
fn pruner(d: &Deployment, done: &Arc<AtomicBool>) -> JoinHandle<(usize, usize)> {
    let (index, done) = (d.own.clone(), done.clone());
    tokio::spawn(async move {
        let (mut runs, mut deleted) = (0, 0);
        for _ in 0..500 {
            if done.load(Ordering::SeqCst) {
                break;
            }
            deleted += prune(&index, WS).await;
            deleted += prune(&index, WS_SMALL).await;
            runs += 1;
            tokio::time::sleep(Duration::from_secs(3)).await;
        }
        (runs, deleted)
    })
}

/// Lists the store itself until `done`: every item confirmed live before a listing starts must
/// be in it. Says on `pruned` when it first sees a failed item gone from the store (pruned by a
/// read, a janitor or `pickup prune`). Returns (rounds, live markers found missing).
fn watcher(
    d: &Deployment,
    done: &Arc<AtomicBool>,
    ledger: &Arc<Mutex<Ledger>>,
    pruned: watch::Sender<bool>,
) -> JoinHandle<(usize, Vec<String>)> {
    let (own, ledger, done) = (d.own.clone(), ledger.clone(), done.clone());
    tokio::spawn(async move {
        let (mut rounds, mut missing) = (0, Vec::new());
        for _ in 0..2_000 {
            if done.load(Ordering::SeqCst) {
                break;
            }
            // Everything confirmed before the listing starts must be in it.
            let (keepers, doomed) = {
                let l = ledger.lock().unwrap();
                (l.keepers.clone(), l.doomed.clone())
            };
            let (big, small) = (listing(&own, WS).await, listing(&own, WS_SMALL).await);
            if doomed
                .iter()
                .any(|id| !big.contains(id) && !small.contains(id))
            {
                pruned.send_replace(true);
            }
            for (ws, id) in keepers {
                let listed = if ws == WS { &big } else { &small };
                if !listed.contains(&id) {
                    missing.push(id);
                }
            }
            rounds += 1;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        (rounds, missing)
    })
}

/// 16 producers alternate between the servers, writing down in the ledger what they did once
/// it was answered. Half-way through, each waits until `pruned` says some dead item has been
/// pruned: pruning provably overlaps registering, however fast the store.
fn producers(
    d: &Deployment,
    ledger: &Arc<Mutex<Ledger>>,
    pruned: watch::Receiver<bool>,
) -> Vec<JoinHandle<()>> {
    (0..PRODUCERS)
        .map(|p| {
            let (api, servers, token, ledger) = (
                d.api.clone(),
                d.bases.clone(),
                d.producer_token.clone(),
                ledger.clone(),
            );
            let mut pruned = pruned.clone();
            tokio::spawn(async move {
                for i in 0..PER_PRODUCER {
                    if i == PER_PRODUCER / 2 {
                        let seen = pruned.wait_for(|p| *p);
                        tokio::time::timeout(Duration::from_secs(120), seen)
                            .await
                            .expect("no dead item was pruned while producers registered")
                            .unwrap();
                    }
                    // Alternate between the servers; a doomed item is failed on the other one.
                    let (here, there) = (&servers[(p + i) % 2], &servers[(p + i + 1) % 2]);
                    let key = match i % 10 {
                        2 | 7 => format!("p{p}-d{i}"),
                        5 => format!("p{p}-k{}", i - 1), // a re-run: supersedes the previous item
                        _ => format!("p{p}-k{i}"),
                    };
                    let id = api.register(here, &token, WS, &key).await;
                    let doomed = matches!(i % 10, 2 | 7);
                    if doomed {
                        api.fail(there, &token, WS, &id).await;
                    }
                    {
                        let mut l = ledger.lock().unwrap();
                        l.all.push((WS.into(), key.clone(), id.clone()));
                        if doomed {
                            l.doomed.insert(id.clone());
                        } else if i % 10 != 4 || i + 1 == PER_PRODUCER {
                            l.keepers.push((WS.into(), id.clone()));
                        } else {
                            // Re-run right after, within the clock skew: kept, not shown.
                            l.rivals.insert(id.clone());
                        }
                    }
                    // The small workspace: one live and one doomed item per producer.
                    if i % 25 == 0 {
                        let key = format!("p{p}-s{i}");
                        let id = api.register(there, &token, WS_SMALL, &key).await;
                        let doomed = i % 50 == 25;
                        if doomed {
                            api.fail(here, &token, WS_SMALL, &id).await;
                        }
                        let mut l = ledger.lock().unwrap();
                        l.all.push((WS_SMALL.into(), key, id.clone()));
                        if doomed {
                            l.doomed.insert(id);
                        } else {
                            l.keepers.push((WS_SMALL.into(), id));
                        }
                    }
                }
            })
        })
        .collect()
}
