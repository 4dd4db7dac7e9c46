//! Nothing Pickup writes lives forever: 30 days of a busy workspace's churn, on a manual clock,
//! with transient faults (through the fault layer), removals, dismissals and registrations whose
//! marker never landed.

use crate::common::backends::Backend;
use crate::common::fault::{Op, When};
use crate::common::*;
use crate::support::open_faulty;
use app::contract::{Filter, Status};
use pickup::index::Clock;
use pickup::index::ItemId;
use pickup::index::ManualClock;
use pickup::index::{Key, UserId, Workspace};

use std::collections::{BTreeMap, HashSet};

const MINUTE: u64 = 60_000;
const DAY: u64 = 24 * HOUR;
/// A registration every 6 minutes: 240 a day.
const EVERY: u64 = 6 * MINUTE;
/// The janitor sweeps every 6 hours; a reader reads every hour.
const SWEEP_EVERY: u64 = 6 * HOUR;

fn user(s: &str) -> UserId {
    UserId::parse(s).unwrap()
}

/// Every key of every workspace, and its item id.
async fn all_keys(index: &pickup::index::Index) -> Vec<(Key, ItemId)> {
    crate::common::all_keys(index)
        .await
        .into_iter()
        .map(|k| {
            let id = k.id().unwrap().clone();
            (k, id)
        })
        .collect()
}

/// 30 days of churn stay bounded by the TTL window, and no live item is touched. Generated as
/// ignored on every backend but memory (`main.rs`, `memory_only`): 7,200 registrations, 720
/// reads and 120 full sweeps take 45 s there (a debug build), and many times that through the
/// file system or an emulator; every rule it exercises is a scenario of its own that runs on
/// every backend.
pub async fn thirty_days_of_churn(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, faults, _) = open_faulty(b, &clock);
    // Transient faults throughout, at most two in a row: below the retry bound.
    faults.flaky(Op::Put, "", 11, When::Before);
    faults.flaky(Op::Put, "", 13, When::After);
    faults.flaky(Op::Delete, "", 7, When::After);
    let limits = index.limits();
    let acme = ws();
    // A workspace that only ever gets records whose marker never landed: no markers at all.
    let beta = Workspace::parse("beta").unwrap();
    // Running items nobody removes: they must keep every key until the TTL says otherwise.
    let mut live: BTreeMap<String, ItemId> = BTreeMap::new();
    let mut counts: Vec<usize> = Vec::new();
    let (mut registered, mut orphaned) = (0, 0);

    for slot in 1..=(30 * DAY / EVERY) {
        clock.advance(EVERY);
        // Items that must survive get keys of their own; the rest re-run 50 keys, so older
        // runs are superseded too.
        let key = match slot % 8 {
            4 | 6 => format!("run{slot}"),
            _ => format!("k{}", slot % 50),
        };
        let reg = |status| {
            let index = index.clone();
            let item = new_item(&key, status);
            let acme = acme.clone();
            async move { index.register(&acme, &item, &producer("prod")).await }
        };
        match slot % 8 {
            // Half finish at once: they leave the list after keep-finished.
            0..=3 => {
                reg(Status::Succeeded).await.unwrap();
            }
            // Runs that never finish (their producer died): shown as stalled until the TTL.
            4 => {
                let r = reg(Status::Running).await.unwrap();
                live.insert(r.id.clone(), ItemId::parse(&r.id).unwrap());
            }
            // Removed by their owner.
            5 => {
                let r = reg(Status::Running).await.unwrap();
                let id = ItemId::parse(&r.id).unwrap();
                index.remove(&acme, &id, &user("prod")).await.unwrap();
            }
            // Dismissed by a viewer: the dismissal lives as long as the item.
            6 => {
                let r = reg(Status::Running).await.unwrap();
                let id = ItemId::parse(&r.id).unwrap();
                index.dismiss(&acme, &user("bob"), &id).await.unwrap();
                live.insert(r.id.clone(), id);
            }
            // The marker never lands: the producer gets an error, the record is an orphan.
            _ => {
                faults.fail(Op::Put, "ws/*/markers/");
                let ws = if slot % 16 == 7 { &beta } else { &acme };
                let item = new_item(&key, Status::Running);
                let res = index.register(ws, &item, &producer("prod")).await;
                assert!(res.is_err(), "a marker that never lands is an error");
                faults.fail_clear();
                orphaned += 1;
            }
        }
        registered += 1;
        let now = clock.now_ms();
        if now % HOUR < EVERY {
            // Readers prune as they read. Keys the read path deletes are dead ones only.
            let read = index
                .recent(&acme, &user("alice"), Filter::All, Some(8), None)
                .await
                .unwrap();
            index.apply(&read.prune).await;
        }
        if now % SWEEP_EVERY < EVERY {
            for ws in index.workspaces().await.unwrap() {
                let sweep = index.sweep(&ws, false).await.unwrap();
                assert_eq!(sweep.failed, 0, "transient faults are retried");
            }
            faults.forget_calls();
            // No live item lost a key: younger than the TTL, its marker and record are there.
            live.retain(|_, id| now - id.created_ms() <= limits.ttl_ms);
            let keys = all_keys(&index).await;
            let present: HashSet<&Key> = keys.iter().map(|(k, _)| k).collect();
            for id in live.values() {
                let mine = key::owner_marker(&acme, &user("prod"), id);
                for key in [key::marker(&acme, id), key::item(&acme, id), mine] {
                    assert!(
                        present.contains(&key),
                        "day {}: live {key} was deleted",
                        (now - T0) / DAY
                    );
                }
            }
            // Nothing outlives its age by name: TTL plus grace, plus the time to the next sweep.
            let oldest_allowed = limits.ttl_ms + limits.grace_ms + limits.max_skew_ms + SWEEP_EVERY;
            for (key, id) in &keys {
                assert!(
                    now - id.created_ms() <= oldest_allowed,
                    "day {}: {key:?} is {} h old",
                    (now - T0) / DAY,
                    (now - id.created_ms()) / HOUR
                );
            }
            // Orphan records go once past the grace period (plus skew), at the next sweep.
            for (key, id) in &keys {
                if matches!(key, Key::Record(ws, _) if *ws == beta) {
                    assert!(
                        now - id.created_ms() <= SWEEP_EVERY + limits.grace_ms + limits.max_skew_ms,
                        "{key:?} is an old orphan"
                    );
                }
            }
            counts.push(keys.len());
        }
    }
    let (before, after) = faults.injected();
    assert!(
        before > 100 && after > 100,
        "faults were injected: {before}, {after}"
    );
    assert_eq!(registered, 30 * 240);
    assert!(orphaned > 0);
    // Bounded by the TTL window: the count stops growing once the first week has passed.
    let per_sweep = (DAY / SWEEP_EVERY) as usize;
    let week_two = *counts[8 * per_sweep..15 * per_sweep].iter().max().unwrap();
    let week_four = *counts[23 * per_sweep..].iter().max().unwrap();
    assert!(
        week_four <= week_two + week_two / 10,
        "keys kept growing: at most {week_two} in week two, {week_four} in week four"
    );
    assert!(
        week_four < registered / 4,
        "{week_four} keys left of {registered} registrations"
    );
    println!(
        "30 days, {registered} registrations ({orphaned} without a marker): at most {week_two} keys in week two, {week_four} in week four; faults injected: {before} before, {after} after applying"
    );
}
