//! The janitor: sweeps whole workspaces (`pickup prune`, and the server every hour) so that
//! nothing Pickup writes lives forever. Safe to run many at once: it deletes only keys it has
//! confirmed dead, and deleting a key twice is harmless.
//!
//! What goes, and why:
//! - markers: expired by name, superseded by a newer run, finished long ago, recordless past
//!   the grace period (each takes its record with it, marker first: [`Index::apply`]);
//! - records whose marker is gone (an orphan: a registration whose marker put failed, a removal
//!   cut short), once older than the grace period plus the clock skew;
//! - dismissals whose marker is gone or going, once older than the grace period;
//! - owner markers (`ws/{ws}/owners/{user}/{id}`, what "Mine" lists) whose marker is going, or
//!   gone and older than the grace period plus the clock skew;
//! - viewers' pins (`ws/{ws}/pinned/{user}/{id}`) whose item's record is gone, past the grace
//!   period plus the skew, or whose id passed the TTL; a pinned item's record is kept until
//!   then (its marker goes at keep-finished without it: the pin outlasts that, `Index::apply`);
//! - viewers' looks (`looked/{ws}/{user}`) once the workspace has no marker left (nor a
//!   record this sweep keeps), written longer ago than the grace period plus the clock skew
//!   (a look's age is the store's last-modified time against this server's now, which
//!   [`Index::apply`] trusts only while the two clocks agree within the skew).
//!
//! Each period it first moves keys of the old kind-first layout to their new names
//! (`Index::move_legacy`), which an older server may still be writing during an upgrade; and
//! each sweep first moves the workspace's looks still under their first name
//! (`ws/{ws}/looked/{user}`, listed by every live reconcile) to `looked/{ws}/{user}`.
//!
//! It also writes the owner marker of a live item that lacks one (items registered before
//! owner markers existed), so "Mine" finds every item within one sweep of an upgrade.
//!
//! Never deleted: a key whose name does not parse (logged), any key of a live, pending or
//! unreadable item, and any look while the workspace has a marker.

use super::core::plan::{Ages, Listing, Plan, Reason};
use super::core::verdict::{judge, settle, Limits, Verdict};
use super::prune::{FoundBy, Prune};
use super::store::{Found, ListedLook, Scope};
use crate::index::ItemId;
use crate::index::Result;
use crate::index::{Index, Key, KeyKind};
use crate::index::{UserId, Workspace};
use futures::StreamExt;
use std::collections::{BTreeMap, HashMap, HashSet};

/// How many records a sweep reads at once.
const SWEEP_CONCURRENCY: usize = 16;

#[derive(Debug, Default)]
pub struct Sweep {
    pub ws: String,
    /// How many keys of each kind the sweep listed.
    pub listed: BTreeMap<KeyKind, usize>,
    /// What was (or, in a dry run, would be) deleted, and why. A marker's record goes with it.
    pub deletes: Vec<(Key, Reason)>,
    /// What was deleted, per kind (empty in a dry run).
    pub deleted: BTreeMap<KeyKind, usize>,
    pub failed: usize,
    /// Deletes by age held back: this server's clock disagrees with the store's.
    pub held: usize,
    pub unknown: usize,
    /// Owner markers written for live items that lacked one.
    pub backfilled: usize,
    /// Looks moved from their first name (`ws/{ws}/looked/{user}`) to their name now; in a dry
    /// run, those that would be.
    pub moved_looks: usize,
}

impl Sweep {
    pub fn markers(&self) -> usize {
        self.listed.get(&KeyKind::Marker).copied().unwrap_or(0)
    }

    /// Planned deletes per kind; a marker's record goes with it, so it counts too.
    pub fn planned(&self) -> BTreeMap<KeyKind, usize> {
        let mut out = BTreeMap::new();
        for (key, _) in &self.deletes {
            *out.entry(key.kind()).or_default() += 1;
            if key.kind() == KeyKind::Marker {
                *out.entry(KeyKind::Record).or_default() += 1;
            }
        }
        out
    }
}

/// The keys of a scope, with the names there that are not keys logged and kept.
async fn list(index: &Index, scope: Scope) -> Result<Vec<Key>> {
    let found = index.store.list(&scope).await?;
    for name in &found.strays {
        tracing::warn!(%scope, name, "not a key Pickup wrote: kept");
    }
    Ok(found.keys)
}

/// The user and the item of a dismissal or an owner marker.
fn user_and_id(key: Key) -> Option<(UserId, ItemId)> {
    match key {
        Key::Dismissal(_, user, id) | Key::OwnerMarker(_, user, id) | Key::Pin(_, user, id) => {
            Some((user, id))
        }
        Key::Marker(..) | Key::Record(..) | Key::Look(..) => None,
    }
}

impl Index {
    /// Sweep one workspace: list it, judge its markers, find the orphans, and (unless
    /// `dry_run`) write the missing owner markers and delete what is dead.
    pub async fn sweep(&self, ws: &Workspace, dry_run: bool) -> Result<Sweep> {
        sweep(self, ws, dry_run).await
    }

    /// The server's janitor: sweeps every workspace once per `period`, the first one a period
    /// after start. A failed sweep is logged and tried again next period.
    pub async fn sweep_every(self: std::sync::Arc<Self>, period: std::time::Duration) {
        every(self, period).await
    }
}

async fn sweep(index: &Index, ws: &Workspace, dry_run: bool) -> Result<Sweep> {
    let now = index.clock.now_ms();
    let limits = &index.limits;
    // A real run moves the keys of the old layout first (the CLI's `prune`, the janitor each
    // period), so a dry run sees them under their new names: else it would take a look or a
    // dismissal of an item still under its old name for an orphan.
    let moving: HashSet<Key> = if dry_run {
        index
            .store
            .legacy_keys()
            .await?
            .into_iter()
            .filter(|k| k.ws() == ws)
            .collect()
    } else {
        HashSet::new()
    };
    // Looks under their first name too: moved by a real run, seen as moved by a dry run.
    let (moved_looks, first_looks) = if dry_run {
        let first = index.store.first_looks(ws).await?;
        let first: Vec<Key> = first.into_iter().map(|(_, look)| look.key).collect();
        (first.len(), first)
    } else {
        (index.store.move_first_looks(ws).await?, Vec::new())
    };
    let mut listed = Inventory::of(index, ws, &moving).await?;
    listed.with_moved_looks(first_looks, now);
    let ages = Ages {
        now_ms: now,
        ttl_ms: limits.ttl_ms,
        max_skew_ms: limits.max_skew_ms,
    };
    let plan = Listing::from(&listed.markers)
        .plan(ages, &HashSet::new(), usize::MAX, None)
        .0;
    let mut sweep = Sweep {
        ws: ws.to_string(),
        listed: listed.counts(),
        moved_looks,
        ..Default::default()
    };
    for name in &plan.unparsable {
        tracing::warn!(%ws, name, "a marker whose name is not an id: kept");
    }
    for (id, reason) in plan.delete.clone() {
        sweep.deletes.push((Key::Marker(ws.clone(), id), reason));
    }
    let judged = judge_markers(index, ws, &plan, now, &moving, &mut sweep).await;
    let missing = orphans(ws, listed, judged, now, limits, &mut sweep);
    sweep.deletes.sort_by(|(a, _), (b, _)| a.cmp(b));
    sweep.backfilled = missing.len();
    if !dry_run {
        carry_out(index, &mut sweep, &missing).await;
    }
    Ok(sweep)
}

/// What a sweep lists of a workspace.
struct Inventory {
    looks: Vec<ListedLook>,
    dismissals: Vec<(UserId, ItemId)>,
    pins: Vec<(UserId, ItemId)>,
    owned: Vec<(UserId, ItemId)>,
    records: Vec<ItemId>,
    markers: Found,
}

impl Inventory {
    /// Looks, dismissals and records first, markers last: a key listed before the markers
    /// whose marker is then missing has really lost it (ids are never reused), so it is safe
    /// to judge; a look listed before a workspace's markers turn out to be none was written
    /// while it had none.
    /// `moving`: keys of the old layout counted under their new names (a dry run's).
    async fn of(index: &Index, ws: &Workspace, moving: &HashSet<Key>) -> Result<Inventory> {
        let looks = index.store.looks(ws).await?;
        let with_moving = |mut keys: Vec<Key>, kind: KeyKind| {
            keys.extend(moving.iter().filter(|k| k.kind() == kind).cloned());
            keys.sort();
            keys.dedup();
            keys
        };
        let dismissals = list(index, Scope::AllDismissals(ws.clone())).await?;
        let dismissals = with_moving(dismissals, KeyKind::Dismissal)
            .into_iter()
            .filter_map(user_and_id)
            .collect();
        let pins = list(index, Scope::AllPins(ws.clone()))
            .await?
            .into_iter()
            .filter_map(user_and_id)
            .collect();
        let owned = list(index, Scope::AllOwnerMarkers(ws.clone())).await?;
        let owned = with_moving(owned, KeyKind::OwnerMarker)
            .into_iter()
            .filter_map(user_and_id)
            .collect();
        let records = list(index, Scope::Records(ws.clone())).await?;
        let records = with_moving(records, KeyKind::Record)
            .into_iter()
            .filter_map(|k| match k {
                Key::Record(_, id) => Some(id),
                _ => None,
            })
            .collect();
        let mut markers = index.store.list(&Scope::Markers(ws.clone())).await?;
        markers.keys = with_moving(markers.keys, KeyKind::Marker);
        Ok(Inventory {
            looks,
            dismissals,
            pins,
            owned,
            records,
            markers,
        })
    }

    /// A dry run's looks under their first name (`moved`), as the real run's move leaves them:
    /// written `now_ms` (a move writes the look again, unless the viewer's look under its new
    /// name is the later, and that one was written since the upgrade), so none is an orphan
    /// old enough to delete in this sweep.
    fn with_moved_looks(&mut self, moved: Vec<Key>, now_ms: u64) {
        for key in moved {
            self.looks.retain(|l| l.key != key);
            self.looks.push(ListedLook {
                key,
                written_ms: now_ms,
            });
        }
        self.looks.sort_by(|a, b| a.key.cmp(&b.key));
    }

    /// How many keys of each kind were listed.
    fn counts(&self) -> BTreeMap<KeyKind, usize> {
        BTreeMap::from([
            (
                KeyKind::Marker,
                self.markers.keys.len() + self.markers.strays.len(),
            ),
            (KeyKind::Record, self.records.len()),
            (KeyKind::Dismissal, self.dismissals.len()),
            (KeyKind::OwnerMarker, self.owned.len()),
            (KeyKind::Pin, self.pins.len()),
            (KeyKind::Look, self.looks.len()),
        ])
    }
}

/// What judging the markers' records found besides the dead.
struct Judged {
    /// Items not found dead (live, pending or unreadable).
    alive: HashSet<ItemId>,
    /// The owner of each live run.
    owners: Vec<(UserId, ItemId)>,
}

/// Every candidate and rival judged, then each key's runs settled together: the dead go into
/// `sweep.deletes`, the unreadable are counted.
async fn judge_markers(
    index: &Index,
    ws: &Workspace,
    plan: &Plan,
    now: u64,
    moving: &HashSet<Key>,
    sweep: &mut Sweep,
) -> Judged {
    let limits = &index.limits;
    let to_judge: Vec<ItemId> = plan
        .candidates
        .iter()
        .chain(&plan.rivals)
        .cloned()
        .collect();
    let mut verdicts: HashMap<ItemId, Verdict> = futures::stream::iter(to_judge)
        .map(|id| async move {
            let record = Key::Record(ws.clone(), id.clone());
            let lookup = match moving.contains(&record) {
                true => index.store.read_moved(&record).await.into(),
                false => index.lookup(ws, &id).await,
            };
            let verdict = judge(&id, lookup, now, limits);
            (id, verdict)
        })
        .buffer_unordered(SWEEP_CONCURRENCY)
        .collect()
        .await;
    let rivals = plan.rivals_by_key();
    let mut judged = Judged {
        alive: verdicts.keys().cloned().collect(),
        owners: Vec::new(),
    };
    for id in &plan.candidates {
        let runs: Vec<(ItemId, Verdict)> = std::iter::once(id)
            .chain(rivals.get(id.key()).into_iter().flatten().copied())
            .filter_map(|id| Some((id.clone(), verdicts.remove(id)?)))
            .collect();
        for (run, verdict) in &runs {
            if let Verdict::Live(card) = verdict {
                if let Ok(owner) = UserId::parse(&card.owner.sub) {
                    judged.owners.push((owner, run.clone()));
                }
            }
        }
        let settled = settle(runs);
        sweep.unknown += settled.unknown.len();
        for (id, reason) in settled.dead {
            judged.alive.remove(&id);
            sweep.deletes.push((Key::Marker(ws.clone(), id), reason));
        }
    }
    judged
}

/// The keys whose item is gone, into `sweep.deletes`; returns the owner markers live items
/// lack.
fn orphans(
    ws: &Workspace,
    listed: Inventory,
    judged: Judged,
    now: u64,
    limits: &Limits,
    sweep: &mut Sweep,
) -> Vec<Key> {
    let marked: HashSet<ItemId> = listed.markers.ids().cloned().collect();
    let age = |id: &ItemId| now.saturating_sub(id.created_ms());
    let expired = |id: &ItemId| age(id) > limits.ttl_ms;
    // A pinned item keeps its record past keep-finished, until its id passes the TTL.
    let pinned: HashSet<ItemId> = listed.pins.iter().map(|(_, id)| id.clone()).collect();
    let kept_for_a_pin = |id: &ItemId| pinned.contains(id) && !expired(id);
    let recorded: HashSet<ItemId> = listed.records.iter().cloned().collect();
    for (user, id) in listed.pins {
        let gone = !recorded.contains(&id)
            && !marked.contains(&id)
            && age(&id) > limits.grace_ms + limits.max_skew_ms;
        if gone || expired(&id) {
            let key = Key::Pin(ws.clone(), user, id);
            sweep.deletes.push((key, Reason::OrphanPin));
        }
    }
    // A record is written before its marker, and a server's clock may run behind: wait the
    // grace period plus the skew before calling a record without a marker an orphan.
    let mut records_kept = 0;
    for id in listed.records {
        if kept_for_a_pin(&id) {
            records_kept += 1;
        } else if !marked.contains(&id) && age(&id) > limits.grace_ms + limits.max_skew_ms {
            sweep
                .deletes
                .push((Key::Record(ws.clone(), id), Reason::OrphanRecord));
        } else {
            records_kept += 1;
        }
    }
    // A look goes with the workspace: only when no marker is left (not even one whose name
    // does not parse) nor a record kept (a registration under way writes its record first).
    // Its age is the store's last-modified time, this server's now minus it: past the grace
    // period plus the skew, it is older than the grace period on the store's clock too.
    let no_item_left =
        listed.markers.keys.is_empty() && listed.markers.strays.is_empty() && records_kept == 0;
    if no_item_left {
        for look in listed.looks {
            if now.saturating_sub(look.written_ms) > limits.grace_ms + limits.max_skew_ms {
                sweep.deletes.push((look.key, Reason::OrphanLook));
            }
        }
    }
    let has_owner_marker: HashSet<&(UserId, ItemId)> = listed.owned.iter().collect();
    let missing: Vec<Key> = judged
        .owners
        .into_iter()
        .filter(|pair| !has_owner_marker.contains(pair))
        .map(|(user, id)| Key::OwnerMarker(ws.clone(), user, id))
        .collect();
    // An owner marker goes with its marker, or once its marker has been gone long enough.
    let doomed: HashSet<ItemId> = sweep
        .deletes
        .iter()
        .filter_map(|(k, _)| match k {
            Key::Marker(_, id) => Some(id.clone()),
            _ => None,
        })
        .collect();
    for (user, id) in listed.owned {
        let gone = !marked.contains(&id) && age(&id) > limits.grace_ms + limits.max_skew_ms;
        if doomed.contains(&id) || gone {
            let key = Key::OwnerMarker(ws.clone(), user, id);
            sweep.deletes.push((key, Reason::OrphanOwnerMarker));
        }
    }
    for (user, id) in listed.dismissals {
        if !judged.alive.contains(&id) && age(&id) > limits.grace_ms {
            let key = Key::Dismissal(ws.clone(), user, id);
            sweep.deletes.push((key, Reason::OrphanDismissal));
        }
    }
    missing
}

/// Write the missing owner markers, then delete what the sweep found dead.
async fn carry_out(index: &Index, sweep: &mut Sweep, missing: &[Key]) {
    for key in missing {
        if let Err(e) = index.store.mark(key).await {
            tracing::warn!(%key, error = %e, "could not write a missing owner marker; the next sweep will");
        }
    }
    let report = index
        .apply(&Prune {
            deletes: sweep.deletes.clone(),
            by: FoundBy::Janitor,
        })
        .await;
    sweep.deleted = report.deleted;
    sweep.failed = report.failed;
    sweep.held = report.held;
}

async fn every(index: std::sync::Arc<Index>, period: std::time::Duration) {
    let mut tick = tokio::time::interval(period);
    // A sweep that outlasts the period is followed by a full period, not a burst of catch-ups.
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await; // the first tick is immediate
    loop {
        tick.tick().await;
        // An older server may still write the old layout while servers are upgraded. No
        // sweep after a move cut short: it would take the records moved without their
        // markers yet for orphans, and delete them.
        if let Err(e) = index.store.move_legacy().await {
            tracing::warn!(error = %e, "janitor could not move keys of the old layout; no sweep this period");
            continue;
        }
        match index.workspaces().await {
            Ok(all) => {
                for ws in all {
                    if let Err(e) = sweep(&index, &ws, false).await {
                        tracing::warn!(%ws, error = %e, "janitor sweep failed");
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "janitor could not list workspaces"),
        }
    }
}
