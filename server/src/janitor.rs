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
//! - owner markers (`owners/{ws}/{user}/{id}`, what "Mine" lists) whose marker is going, or
//!   gone and older than the grace period plus the clock skew.
//!
//! It also writes the owner marker of a live item that lacks one (items registered before
//! owner markers existed), so "Mine" finds every item within one sweep of an upgrade.
//!
//! Never deleted: a key whose name does not parse (logged), and any key of a live, pending or
//! unreadable item.

use crate::error::Result;
use crate::id::ItemId;
use crate::index::{Index, Prune};
use crate::names::{UserId, Workspace};
use crate::plan::{plan, Ages, Reason};
use crate::store::{keys, Key, KeyKind};
use crate::verdict::{judge, settle, Verdict};
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
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

/// Names under `prefix`, with the part of the path below it (`user/id` for dismissals).
async fn list(index: &Index, prefix: &Path) -> Result<Vec<Path>> {
    Ok(index
        .store
        .inner
        .list(Some(prefix))
        .map_ok(|m| m.location)
        .try_collect()
        .await?)
}

/// `{root}/{ws}/{user}/{id}` (a dismissal, an owner marker): the user and the id, if both parse.
fn user_and_id(path: &Path) -> Option<(UserId, ItemId)> {
    let mut parts = path.parts().skip(2);
    let user = UserId::parse(parts.next()?.as_ref()).ok()?;
    let id = ItemId::parse(parts.next()?.as_ref()).ok()?;
    Some((user, id))
}

pub async fn sweep(index: &Index, ws: &Workspace, dry_run: bool) -> Result<Sweep> {
    let now = index.clock.now_ms();
    let limits = &index.limits;
    // Dismissals and records first, markers last: a key listed before the markers whose marker
    // is then missing has really lost it (ids are never reused), so it is safe to judge.
    let dismissals: Vec<(UserId, ItemId)> = list(index, &keys::dismissals(ws))
        .await?
        .iter()
        .filter_map(user_and_id)
        .collect();
    let owned: Vec<(UserId, ItemId)> = list(index, &keys::all_owner_markers(ws))
        .await?
        .iter()
        .filter_map(user_and_id)
        .collect();
    let records: Vec<ItemId> = list(index, &keys::items(ws))
        .await?
        .iter()
        .filter_map(|p| p.filename()?.strip_suffix(".json").map(ItemId::parse)?.ok())
        .collect();
    let names: Vec<String> = index
        .names_under(&keys::markers(ws))
        .await?
        .into_iter()
        .collect();
    let ages = Ages {
        now_ms: now,
        ttl_ms: limits.ttl_ms,
        max_skew_ms: limits.max_skew_ms,
    };
    let p = plan(&names, ages, &HashSet::new());
    let mut sweep = Sweep {
        ws: ws.to_string(),
        listed: BTreeMap::from([
            (KeyKind::Marker, names.len()),
            (KeyKind::Record, records.len()),
            (KeyKind::Dismissal, dismissals.len()),
            (KeyKind::OwnerMarker, owned.len()),
        ]),
        ..Default::default()
    };
    for name in &p.unparsable {
        tracing::warn!(%ws, name, "a marker whose name is not an id: kept");
    }
    let marked: HashSet<ItemId> = names.iter().filter_map(|n| ItemId::parse(n).ok()).collect();
    for (id, reason) in p.delete.clone() {
        sweep.deletes.push((Key::Marker(ws.clone(), id), reason));
    }
    // Every candidate and rival judged, then each key's runs settled together.
    let to_judge: Vec<ItemId> = p.candidates.iter().chain(&p.rivals).cloned().collect();
    let verdicts: HashMap<ItemId, Verdict> = futures::stream::iter(to_judge)
        .map(|id| async move {
            let lookup = index.lookup(ws, &id).await;
            let verdict = judge(&id, lookup, now, limits);
            (id, verdict)
        })
        .buffer_unordered(SWEEP_CONCURRENCY)
        .collect()
        .await;
    let mut verdicts = verdicts;
    let rivals = p.rivals_by_key();
    let mut alive: HashSet<ItemId> = verdicts.keys().cloned().collect();
    let mut owners: Vec<(UserId, ItemId)> = Vec::new();
    for id in &p.candidates {
        let runs: Vec<(ItemId, Verdict)> = std::iter::once(id)
            .chain(rivals.get(id.key()).into_iter().flatten().copied())
            .filter_map(|id| Some((id.clone(), verdicts.remove(id)?)))
            .collect();
        for (run, verdict) in &runs {
            if let Verdict::Live(card) = verdict {
                if let Ok(owner) = UserId::parse(&card.owner.sub) {
                    owners.push((owner, run.clone()));
                }
            }
        }
        let settled = settle(runs);
        sweep.unknown += settled.unknown.len();
        for (id, reason) in settled.dead {
            alive.remove(&id);
            sweep.deletes.push((Key::Marker(ws.clone(), id), reason));
        }
    }
    let age = |id: &ItemId| now.saturating_sub(id.created_ms());
    // A record is written before its marker, and a server's clock may run behind: wait the
    // grace period plus the skew before calling a record without a marker an orphan.
    for id in records {
        if !marked.contains(&id) && age(&id) > limits.grace_ms + limits.max_skew_ms {
            sweep
                .deletes
                .push((Key::Record(ws.clone(), id), Reason::OrphanRecord));
        }
    }
    let has_owner_marker: HashSet<&(UserId, ItemId)> = owned.iter().collect();
    let missing: Vec<Key> = owners
        .into_iter()
        .filter(|pair| !has_owner_marker.contains(pair))
        .map(|(user, id)| Key::OwnerMarker(ws.clone(), user, id))
        .collect();
    // An owner marker goes with its marker, or once its marker has been gone long enough.
    let doomed: HashSet<ItemId> = sweep
        .deletes
        .iter()
        .filter(|(k, _)| matches!(k, Key::Marker(..)))
        .map(|(k, _)| k.id().clone())
        .collect();
    for (user, id) in owned {
        let gone = !marked.contains(&id) && age(&id) > limits.grace_ms + limits.max_skew_ms;
        if doomed.contains(&id) || gone {
            let key = Key::OwnerMarker(ws.clone(), user, id);
            sweep.deletes.push((key, Reason::OrphanOwnerMarker));
        }
    }
    for (user, id) in dismissals {
        if !alive.contains(&id) && age(&id) > limits.grace_ms {
            let key = Key::Dismissal(ws.clone(), user, id);
            sweep.deletes.push((key, Reason::OrphanDismissal));
        }
    }
    sweep.deletes.sort_by_key(|(key, _)| key.path());
    sweep.backfilled = missing.len();
    if !dry_run {
        for key in &missing {
            if let Err(e) = index
                .store
                .put(
                    &key.path(),
                    bytes::Bytes::new(),
                    object_store::PutMode::Overwrite,
                )
                .await
            {
                tracing::warn!(%key, error = %e, "could not write a missing owner marker; the next sweep will");
            }
        }
        let report = index
            .apply(&Prune {
                deletes: sweep.deletes.clone(),
            })
            .await;
        sweep.deleted = report.deleted;
        sweep.failed = report.failed;
        sweep.held = report.held;
    }
    Ok(sweep)
}

/// Every workspace that has any key under `markers/`, `items/` or `dismissed/`.
pub async fn workspaces(index: &Index) -> Result<Vec<Workspace>> {
    let mut found = std::collections::BTreeSet::new();
    for root in keys::ROOTS {
        let listing = index
            .store
            .inner
            .list_with_delimiter(Some(&Path::from(root)))
            .await?;
        for prefix in &listing.common_prefixes {
            match prefix.filename().map(Workspace::parse) {
                Some(Ok(ws)) => {
                    found.insert(ws);
                }
                _ => tracing::warn!(%prefix, "not a workspace name: skipped"),
            }
        }
    }
    Ok(found.into_iter().collect())
}
