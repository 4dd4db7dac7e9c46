//! The marker index's behaviour on every real backend Pickup supports, opened through the same
//! code path as `PICKUP_STORE` (`Store::open(url)` with the `AWS_*`/`AZURE_*`/`GOOGLE_*`
//! variables): the local file system always; Azure Blob (Azurite) and S3 (moto) when
//! `scripts/emulators.sh run -- …` has started them (`make test-backends`); GCS when
//! `PICKUP_TEST_GCS_URL` names one. Absent backends are reported as skipped.
//!
//! Each test runs against each backend in turn, on a fresh root (`{base}/run-{random}`), and
//! prints one line per backend. `ordered_early_stop_and_list_time` prints how long listing
//! 1,500 markers took (`cargo test --test backends -- --nocapture`).

#[path = "common/backends.rs"]
mod backends;
mod common;

use app::model::{Filter, Status};
use backends::{backends, Backend};
use common::fault::{FaultStore, Op};
use common::*;
use futures::StreamExt;
use pickup::clock::{Clock, ManualClock};
use pickup::error::Error;
use pickup::id::ItemId;
use pickup::index::Index;
use pickup::names::{SubKey, UserId, Workspace};
use pickup::plan::Reason;
use pickup::record::ItemUpdate;
use pickup::store::{Expect, Scope, Store, StoreError};
use pickup::verdict::Limits;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

const DAY: u64 = 24 * HOUR;

fn user(sub: &str) -> UserId {
    UserId::parse(sub).unwrap()
}

fn alice() -> UserId {
    UserId::parse("alice").unwrap()
}

fn index(store: Store, clock: &ManualClock) -> Index {
    Index::new(store, Limits::default(), 8, Arc::new(clock.clone()))
}

/// The same store, behind the fault wrapper, so a test can count what the index listed and read.
fn counted(store: &Store, clock: &ManualClock) -> (Index, Arc<FaultStore>) {
    faulty(store, clock)
}

fn id_of(s: &str) -> ItemId {
    ItemId::parse(s).unwrap()
}

fn done(test: &str, b: &Backend, started: Instant) {
    println!(
        "{test}: backend {} ok ({:.2} s)",
        b.name,
        started.elapsed().as_secs_f64()
    );
}

/// The ids of a scope in the order the store's listing yields them.
async fn listed_in_order(store: &Store, scope: Scope) -> Vec<String> {
    let mut pages = store.pages(&scope, None);
    let mut out = Vec::new();
    while let Some(found) = pages.next(1_000).await.unwrap() {
        out.extend(found.ids().map(|id| id.to_string()));
    }
    out
}

fn up(status: Status, progress: f64) -> ItemUpdate {
    ItemUpdate {
        progress: Some(progress),
        ..ItemUpdate::new(format!("progress {progress}"), status)
    }
}

/// Register: create-only record then marker; two registrations of one key in one millisecond
/// both land; the store's own listing has every marker; records round-trip; the page shows the
/// newest run of each key, newest first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn register_and_list() {
    for b in backends("register_and_list") {
        let started = Instant::now();
        let (store, _) = b.open("run");
        let clock = ManualClock::new(T0);
        let index = index(store.clone(), &clock);
        let mut ids = Vec::new();
        for i in 0..8 {
            let r = index
                .register(
                    &ws(),
                    &new_item(&format!("k{i}"), Status::Running),
                    owner("bob"),
                )
                .await
                .unwrap();
            ids.push(r.id);
            clock.advance(1);
        }
        // The same key twice in the same millisecond, concurrently: the create-only put of the
        // second finds the id taken and moves on by 1 ms.
        let (w, same) = (ws(), new_item("same", Status::Running));
        let (r1, r2) = tokio::join!(
            index.register(&w, &same, owner("a")),
            index.register(&w, &same, owner("b")),
        );
        let (r1, r2) = (r1.unwrap().id, r2.unwrap().id);
        assert_ne!(r1, r2, "{}: both registrations land", b.name);
        let (older, newer) = if r1 > r2 { (r1, r2) } else { (r2, r1) };
        assert_eq!(id_of(&older).created_ms() + 1, id_of(&newer).created_ms());
        ids.push(older.clone());
        ids.push(newer.clone());
        ids.sort();

        assert_eq!(
            markers(&index).await,
            ids,
            "{}: the store lists every marker",
            b.name
        );
        if b.sorted {
            assert_eq!(
                listed_in_order(&store, scope::markers(&ws())).await,
                ids,
                "{}: a sorted store lists in key order",
                b.name
            );
        }
        for id in &ids {
            let (rec, _) = index.get(&ws(), &id_of(id)).await.unwrap();
            assert_eq!(&rec.id, id);
            assert_eq!(rec.ws, "acme");
        }

        clock.advance(1_000);
        let read = index
            .recent(&ws(), &alice(), Filter::All, Some(50), None)
            .await
            .unwrap();
        let shown: Vec<String> = read.page.cards.iter().map(|c| c.id.clone()).collect();
        let want: Vec<String> = ids.iter().filter(|i| **i != older).cloned().collect();
        assert_eq!(shown, want, "{}: newest first, one per key", b.name);
        assert!(!read.page.more && !read.page.partial);
        // Two runs of one key in flight within the clock skew: the newest id is shown, and
        // neither is deleted (either may really be the newest).
        assert!(read.prune.deletes.is_empty(), "{}", b.name);
        let _ = newer;
        let mine = index
            .recent(
                &ws(),
                &UserId::parse("a").unwrap(),
                Filter::Mine,
                Some(50),
                None,
            )
            .await
            .unwrap()
            .page;
        assert!(mine.cards.iter().all(|c| c.owner.sub == "a"));
        done("register_and_list", &b, started);
    }
}

/// 1,500 markers: registered 32 at a time; the full listing is timed (and on sorted stores
/// checked to come back in key order, across list pages); a read of 8 cards stops listing early
/// on a sorted store and shows the 8 newest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordered_early_stop_and_list_time() {
    const N: u64 = 1_500;
    for b in backends("ordered_early_stop_and_list_time") {
        let started = Instant::now();
        let (store, _) = b.open("run");
        let t_reg = Instant::now();
        let ids: Vec<String> = futures::stream::iter(0..N)
            .map(|i| {
                let store = store.clone();
                async move {
                    // Each its own millisecond: item i is created at T0 + i.
                    let at = index_of(store, &ManualClock::new(T0 + i));
                    at.register(
                        &ws(),
                        &new_item(&format!("k{i}"), Status::Running),
                        owner("a"),
                    )
                    .await
                    .unwrap()
                    .id
                }
            })
            .buffer_unordered(32)
            .collect()
            .await;
        let reg_s = t_reg.elapsed().as_secs_f64();
        let mut sorted_ids = ids.clone();
        sorted_ids.sort();

        let clock = ManualClock::new(T0 + N + 1_000);
        let index = index(store.clone(), &clock);
        let mut list_ms = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            let names = names(index.store(), scope::markers(&ws())).await;
            list_ms.push(t.elapsed().as_secs_f64() * 1e3);
            assert_eq!(names.len(), N as usize, "{}", b.name);
        }
        if b.sorted {
            assert_eq!(
                listed_in_order(&store, scope::markers(&ws())).await,
                sorted_ids,
                "{}: a sorted store lists 1,500 markers in key order",
                b.name
            );
        }

        // Without a layer in between: on the clouds, the store's own pages, sized to the read.
        let t = Instant::now();
        let direct = index
            .recent(&ws(), &alice(), Filter::All, Some(8), None)
            .await
            .unwrap();
        let direct_ms = t.elapsed().as_secs_f64() * 1e3;
        if b.sorted {
            assert!(
                direct.listed <= pickup::plan::Budget::new(8).candidates() + 1,
                "{}: the store returned {} keys of 1,500 markers for a read of 8 (in pages: {})",
                b.name,
                direct.listed,
                store.lists_in_pages()
            );
        }
        let (counting, faults) = counted(&store, &clock);
        let t = Instant::now();
        let read = counting
            .recent(&ws(), &alice(), Filter::All, Some(8), None)
            .await
            .unwrap();
        let read_ms = t.elapsed().as_secs_f64() * 1e3;
        let listed = faults.listed.load(std::sync::atomic::Ordering::SeqCst);
        let shown: Vec<String> = read.page.cards.iter().map(|c| c.id.clone()).collect();
        assert_eq!(
            shown,
            sorted_ids[..8].to_vec(),
            "{}: the 8 newest, newest first",
            b.name
        );
        assert!(read.page.more);
        assert_eq!(
            faults.calls_of(Op::Get).len(),
            8,
            "resolved only the first 8"
        );
        if b.sorted {
            assert!(
                listed <= pickup::plan::Budget::new(8).candidates() + 1,
                "{}: listed {listed} of 1,500 markers",
                b.name
            );
        } else {
            assert_eq!(
                listed, N as usize,
                "{}: an unsorted store lists all",
                b.name
            );
        }
        // A janitor's sweep lists everything and reads every record (a dry run: all are live).
        let t = Instant::now();
        let sweep = pickup::janitor::sweep(&index, &ws(), true).await.unwrap();
        let sweep_s = t.elapsed().as_secs_f64();
        assert_eq!((sweep.markers(), sweep.deletes.len()), (N as usize, 0));
        list_ms.sort_by(f64::total_cmp);
        println!(
            "ordered_early_stop_and_list_time: backend {}: 1,500 markers registered in {reg_s:.1} s (32 at a time); listing all 1,500: {:.0} ms (median of 3; {:.0}..{:.0} ms); a read of 8 cards took {direct_ms:.0} ms, the store returning {} keys ({}), and {read_ms:.0} ms through a layer that lists plainly (it took {listed}); a janitor sweep (1,500 record reads) took {sweep_s:.1} s",
            b.name,
            list_ms[1],
            list_ms[0],
            list_ms[2],
            direct.listed,
            if store.lists_in_pages() {
                "in pages sized to the read"
            } else {
                "one listing"
            }
        );
        done("ordered_early_stop_and_list_time", &b, started);
    }
}

/// A marker older than the TTL is deleted by its name alone: its record is never read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn age_prune_by_name() {
    for b in backends("age_prune_by_name") {
        let started = Instant::now();
        let (store, _) = b.open("run");
        let clock = ManualClock::new(T0);
        let (index, faults) = counted(&store, &clock);
        let old = index
            .register(&ws(), &new_item("old", Status::Running), owner("a"))
            .await
            .unwrap();
        clock.advance(8 * DAY);
        let young = index
            .register(&ws(), &new_item("young", Status::Running), owner("a"))
            .await
            .unwrap();
        faults.forget_calls();
        let read = index
            .recent(&ws(), &alice(), Filter::All, None, None)
            .await
            .unwrap();
        assert_eq!(
            faults.calls_of(Op::Get),
            vec![format!("items/acme/{}.json", young.id)],
            "{}: only the young item is resolved",
            b.name
        );
        assert_eq!(
            paths(&read.prune.deletes),
            vec![(key::marker(&ws(), &id_of(&old.id)), Reason::Expired)]
        );
        index.apply(&read.prune).await;
        assert_eq!(markers(&index).await, vec![young.id], "{}", b.name);
        done("age_prune_by_name", &b, started);
    }
}

/// Dedupe by sub-key: the older run's marker goes (its record stays), the newest is shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dedupe_older_runs() {
    for b in backends("dedupe_older_runs") {
        let started = Instant::now();
        let (store, _) = b.open("run");
        let clock = ManualClock::new(T0);
        let index = index(store, &clock);
        let first = index
            .register(&ws(), &new_item("k", Status::Running), owner("a"))
            .await
            .unwrap();
        clock.advance(3 * 60_000); // more than the clock skew apart
        let second = index
            .register(&ws(), &new_item("k", Status::Running), owner("a"))
            .await
            .unwrap();
        let other = index
            .register(&ws(), &new_item("other", Status::Queued), owner("a"))
            .await
            .unwrap();
        let read = index
            .recent(&ws(), &alice(), Filter::All, None, None)
            .await
            .unwrap();
        let mut want = vec![second.id.clone(), other.id.clone()];
        want.sort();
        assert_eq!(
            read.page
                .cards
                .iter()
                .map(|c| c.id.clone())
                .collect::<Vec<_>>(),
            want
        );
        assert_eq!(
            paths(&read.prune.deletes),
            vec![(
                key::marker(&ws(), &id_of(&first.id)),
                Reason::Superseded(second.id.clone())
            )]
        );
        index.apply(&read.prune).await;
        assert_eq!(markers(&index).await, want, "{}", b.name);
        assert!(
            matches!(
                index.get(&ws(), &id_of(&first.id)).await,
                Err(Error::NotFound)
            ),
            "{}: the superseded run's record went with its marker",
            b.name
        );
        done("dedupe_older_runs", &b, started);
    }
}

/// Finished longer ago than keep-finished: dead, only its marker is deleted. Also an item that
/// finished through an update, and a record that does not parse (unknown: kept, page partial).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_items_and_unreadable_records() {
    for b in backends("dead_items_and_unreadable_records") {
        let started = Instant::now();
        let (store, _) = b.open("run");
        let clock = ManualClock::new(T0);
        let (index, faults) = counted(&store, &clock);
        let failed = index
            .register(&ws(), &new_item("failed", Status::Failed), owner("a"))
            .await
            .unwrap();
        let finished = index
            .register(&ws(), &new_item("finished", Status::Running), owner("a"))
            .await
            .unwrap();
        finish(&index, &finished.id, Status::Succeeded).await;
        let garbled = index
            .register(&ws(), &new_item("garbled", Status::Running), owner("a"))
            .await
            .unwrap();
        store
            .write(
                &key::item(&ws(), &id_of(&garbled.id)),
                bytes::Bytes::from_static(b"{not json"),
                Expect::Any,
            )
            .await
            .unwrap();
        clock.advance(25 * HOUR);
        let mut live = Vec::new();
        for k in ["b", "c"] {
            live.push(
                index
                    .register(&ws(), &new_item(k, Status::Running), owner("a"))
                    .await
                    .unwrap()
                    .id,
            );
        }
        faults.forget_calls();
        let read = index
            .recent(&ws(), &alice(), Filter::All, None, None)
            .await
            .unwrap();
        assert_eq!(read.page.cards.len(), 2, "{}", b.name);
        assert!(
            read.page.partial,
            "{}: an unreadable record makes the page partial",
            b.name
        );
        let mut dead: Vec<_> = paths(&read.prune.deletes);
        dead.sort_by(|a, b| a.0.cmp(&b.0));
        let mut want = vec![
            (
                key::marker(&ws(), &id_of(&failed.id)),
                Reason::FinishedLongAgo,
            ),
            (
                key::marker(&ws(), &id_of(&finished.id)),
                Reason::FinishedLongAgo,
            ),
        ];
        want.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(dead, want, "{}", b.name);
        let report = index.apply(&read.prune).await;
        assert_eq!((report.total(), report.failed), (4, 0));
        let mut deletes = faults.calls_of(Op::Delete);
        deletes.sort();
        let mut want_deletes = vec![
            format!("items/acme/{}.json", failed.id),
            format!("items/acme/{}.json", finished.id),
            format!("markers/acme/{}", failed.id),
            format!("markers/acme/{}", finished.id),
        ];
        want_deletes.sort();
        assert_eq!(
            deletes, want_deletes,
            "{}: only the dead items' markers and records",
            b.name
        );
        live.push(garbled.id.clone());
        live.sort();
        assert_eq!(markers(&index).await, live, "{}", b.name);
        assert!(
            matches!(
                index.get(&ws(), &id_of(&failed.id)).await,
                Err(Error::NotFound)
            ),
            "a dead item's record goes with its marker"
        );
        // The janitor agrees: the garbled one is unknown and kept. It deletes only the owner
        // markers of the two items the read deleted (a read of everyone's items does not
        // know their owners).
        let sweep = pickup::janitor::sweep(&index, &ws(), false).await.unwrap();
        let a = UserId::parse("a").unwrap();
        let mut want = vec![
            (
                key::owner_marker(&ws(), &a, &id_of(&failed.id)),
                Reason::OrphanOwnerMarker,
            ),
            (
                key::owner_marker(&ws(), &a, &id_of(&finished.id)),
                Reason::OrphanOwnerMarker,
            ),
        ];
        want.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(sweep.unknown, 1, "{}", b.name);
        assert_eq!(paths(&sweep.deletes), want, "{}", b.name);
        done("dead_items_and_unreadable_records", &b, started);
    }
}

/// A young marker without its record is neither shown nor deleted; past the grace period it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grace_for_a_recordless_marker() {
    for b in backends("grace_for_a_recordless_marker") {
        let started = Instant::now();
        let (store, _) = b.open("run");
        let clock = ManualClock::new(T0);
        let index = index(store.clone(), &clock);
        let id = ItemId::new(T0, SubKey::parse("early").unwrap()).unwrap();
        store.mark(&key::marker(&ws(), &id)).await.unwrap();
        clock.advance(30_000);
        let read = index
            .recent(&ws(), &alice(), Filter::All, None, None)
            .await
            .unwrap();
        assert!(read.page.cards.is_empty() && !read.page.partial);
        assert!(read.prune.deletes.is_empty(), "{}: young, kept", b.name);
        let sweep = pickup::janitor::sweep(&index, &ws(), false).await.unwrap();
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
            paths(&read.prune.deletes),
            vec![(key::marker(&ws(), &id), Reason::NoRecord)]
        );
        index.apply(&read.prune).await;
        assert!(markers(&index).await.is_empty(), "{}", b.name);
        done("grace_for_a_recordless_marker", &b, started);
    }
}

/// Dismissals hide a card from one viewer only. A read that deletes a superseded marker takes
/// the viewer's dismissal of it along; the janitor removes dismissals of markers that are gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dismissals_are_per_viewer() {
    for b in backends("dismissals_are_per_viewer") {
        let started = Instant::now();
        let (store, _) = b.open("run");
        let clock = ManualClock::new(T0);
        let index = index(store, &clock);
        let page = |who: &'static str| {
            let index = index.clone();
            async move {
                index
                    .recent(&ws(), &UserId::parse(who).unwrap(), Filter::All, None, None)
                    .await
                    .unwrap()
            }
        };
        let a = index
            .register(&ws(), &new_item("a", Status::Failed), owner("a"))
            .await
            .unwrap();
        let a_id = id_of(&a.id);
        let k1 = index
            .register(&ws(), &new_item("k", Status::Running), owner("a"))
            .await
            .unwrap();
        let k1_id = id_of(&k1.id);
        index.dismiss(&ws(), &alice(), &a_id).await.unwrap();
        index.dismiss(&ws(), &alice(), &k1_id).await.unwrap();
        assert!(page("alice").await.page.cards.is_empty(), "{}", b.name);
        assert_eq!(page("bob").await.page.cards.len(), 2, "{}", b.name);

        // A newer run of k: alice's read deletes the old marker and her dismissal of it.
        clock.advance(3 * 60_000); // more than the clock skew apart
        let k2 = index
            .register(&ws(), &new_item("k", Status::Running), owner("a"))
            .await
            .unwrap();
        let read = page("alice").await;
        assert_eq!(
            read.page
                .cards
                .iter()
                .map(|c| c.id.clone())
                .collect::<Vec<_>>(),
            vec![k2.id.clone()],
            "{}",
            b.name
        );
        assert_eq!(
            paths(&read.prune.deletes),
            vec![
                (
                    key::marker(&ws(), &k1_id),
                    Reason::Superseded(k2.id.clone())
                ),
                (
                    key::dismissal(&ws(), &alice(), &k1_id),
                    Reason::OrphanDismissal
                )
            ]
        );
        index.apply(&read.prune).await;

        // A finished long ago: bob's read deletes its marker; the janitor, alice's dismissal.
        clock.advance(25 * HOUR);
        let read = page("bob").await;
        assert_eq!(
            paths(&read.prune.deletes),
            vec![(key::marker(&ws(), &a_id), Reason::FinishedLongAgo)]
        );
        index.apply(&read.prune).await;
        let sweep = pickup::janitor::sweep(&index, &ws(), false).await.unwrap();
        // Its owner marker and that of k's older run go too: the reads did not know owners.
        let owner_a = UserId::parse("a").unwrap();
        assert_eq!(
            paths(&sweep.deletes),
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
        assert!(names(index.store(), scope::dismissals(&ws()))
            .await
            .is_empty());
        done("dismissals_are_per_viewer", &b, started);
    }
}

/// The janitor sweeps whole workspaces: expired, superseded, finished long ago, recordless past
/// grace, and dismissals whose marker is gone; a young recordless marker, a live (stalled) item
/// and a live item's dismissal stay. A dry run deletes nothing; two janitors at once are fine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn janitor_sweeps_workspaces() {
    for b in backends("janitor_sweeps_workspaces") {
        let started = Instant::now();
        let (store, _) = b.open("run");
        let clock = ManualClock::new(T0);
        let index = index(store.clone(), &clock);
        let reg = |key: &'static str, status: Status| {
            let index = index.clone();
            async move {
                index
                    .register(&ws(), &new_item(key, status), owner("a"))
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
        store.mark(&key::marker(&ws(), &ghost)).await.unwrap();
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
        store.mark(&key::marker(&ws(), &fresh)).await.unwrap();
        let beta = Workspace::parse("beta").unwrap();
        index
            .register(&beta, &new_item("x", Status::Running), owner("a"))
            .await
            .unwrap();

        let mut all: Vec<String> = pickup::janitor::workspaces(&index)
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
        let dry = pickup::janitor::sweep(&index, &ws(), true).await.unwrap();
        assert_eq!(paths(&dry.deletes), want, "{}: what and why", b.name);
        assert_eq!(dry.markers(), 7);
        assert_eq!(
            markers(&index).await,
            before,
            "{}: a dry run deletes nothing",
            b.name
        );

        let w = ws();
        let (s1, s2) = tokio::join!(
            pickup::janitor::sweep(&index, &w, false),
            pickup::janitor::sweep(&index, &w, false)
        );
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
        let dismissals: BTreeSet<String> = names(index.store(), scope::dismissals(&ws()))
            .await
            .into_iter()
            .collect();
        assert_eq!(dismissals, BTreeSet::from([live.clone()]), "{}", b.name);
        let again = pickup::janitor::sweep(&index, &ws(), false).await.unwrap();
        assert!(again.deletes.is_empty(), "{}: nothing left to do", b.name);
        done("janitor_sweeps_workspaces", &b, started);
    }
}

/// Create-only puts refuse a taken key everywhere. Conditional update: compare-and-set where the
/// store can (a stale or made-up ETag is 412 and writes nothing), 501 where it cannot (files).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conditional_update() {
    for b in backends("conditional_update") {
        let started = Instant::now();
        let (store, _) = b.open("run");
        let clock = ManualClock::new(T0);
        let index = index(store.clone(), &clock);
        let r = index
            .register(&ws(), &new_item("a", Status::Running), owner("a"))
            .await
            .unwrap();
        let id = id_of(&r.id);
        let again = store
            .write(
                &key::item(&ws(), &id),
                bytes::Bytes::from_static(b"{}"),
                Expect::Absent,
            )
            .await;
        assert!(
            matches!(again, Err(StoreError::Exists)),
            "{}: create-only put of a taken key: {again:?}",
            b.name
        );

        let (_, etag) = index.get(&ws(), &id).await.unwrap();
        if b.conditional {
            let etag = etag.unwrap_or_else(|| panic!("{}: the store gives ETags", b.name));
            clock.advance(1_000);
            let (rec, new_etag) = index
                .update(
                    &ws(),
                    &id,
                    &up(Status::Running, 0.5),
                    &user("a"),
                    Some(etag.clone()),
                )
                .await
                .unwrap();
            assert_eq!(rec.progress, Some(0.5));
            let new_etag = new_etag.expect("an ETag for the new version");
            assert_ne!(new_etag, etag);
            for stale in [etag, "\"made-up\"".to_string()] {
                let res = index
                    .update(
                        &ws(),
                        &id,
                        &up(Status::Running, 0.9),
                        &user("a"),
                        Some(stale),
                    )
                    .await;
                assert!(
                    matches!(res, Err(Error::PreconditionFailed)),
                    "{}: {res:?}",
                    b.name
                );
            }
            let (now, etag_now) = index.get(&ws(), &id).await.unwrap();
            assert_eq!(
                now.progress,
                Some(0.5),
                "{}: the lost race wrote nothing",
                b.name
            );
            assert_eq!(etag_now, Some(new_etag.clone()));
            index
                .update(
                    &ws(),
                    &id,
                    &up(Status::Succeeded, 1.0),
                    &user("a"),
                    Some(new_etag),
                )
                .await
                .unwrap();
            // Without If-Match an update is a plain write.
            index
                .update(&ws(), &id, &up(Status::Failed, 1.0), &user("a"), None)
                .await
                .unwrap();
            assert_eq!(
                index.get(&ws(), &id).await.unwrap().0.status,
                Status::Failed
            );
        } else {
            let res = index
                .update(&ws(), &id, &up(Status::Running, 0.5), &user("a"), etag)
                .await;
            assert!(
                matches!(res, Err(Error::NotSupported(_))),
                "{}: {res:?}",
                b.name
            );
            assert_eq!(
                index.get(&ws(), &id).await.unwrap().0.progress,
                None,
                "{}: no silent plain write",
                b.name
            );
        }
        done("conditional_update", &b, started);
    }
}

/// A bucket or container that does not exist: a read and a sweep are errors, never "empty".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_bucket_is_an_error_not_empty() {
    for b in backends("missing_bucket_is_an_error_not_empty") {
        if !b.sorted {
            // A missing directory is created by Store::open; nothing to test.
            continue;
        }
        let started = Instant::now();
        let scheme = b.base.split("://").next().unwrap();
        let url = format!("{scheme}://{}", backends::unique("no-such"));
        let store = Store::open(&url).unwrap();
        let clock = ManualClock::new(T0);
        let index = index(store, &clock);
        let read = index.recent(&ws(), &alice(), Filter::All, None, None).await;
        assert!(read.is_err(), "{}: {read:?}", b.name);
        assert!(pickup::janitor::sweep(&index, &ws(), false).await.is_err());
        done("missing_bucket_is_an_error_not_empty", &b, started);
    }
}
