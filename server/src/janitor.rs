//! The janitor: sweeps whole workspaces (`pickup prune`, and the server every hour): age,
//! dedupe, dead, and dismissals of markers that no longer exist. Safe to run many at once: it
//! deletes only keys it has confirmed dead, and deleting a key twice is harmless.

use crate::error::Result;
use crate::id::ItemId;
use crate::index::Index;
use crate::names::Workspace;
use crate::plan::{plan, Reason};
use crate::store::keys;
use crate::verdict::{judge, Verdict};
use futures::StreamExt;
use object_store::path::Path;
use std::collections::HashSet;

/// How many records a sweep reads at once.
const SWEEP_CONCURRENCY: usize = 16;

#[derive(Debug, Default)]
pub struct Sweep {
    pub ws: String,
    pub markers: usize,
    /// What was (or, in a dry run, would be) deleted, and why.
    pub deletes: Vec<(Path, Reason)>,
    pub failed: usize,
    pub unknown: usize,
}

pub async fn sweep(index: &Index, ws: &Workspace, dry_run: bool) -> Result<Sweep> {
    let now = index.clock.now_ms();
    // Dismissals first, markers second: a marker listed after the dismissals that is missing is
    // really gone (ids are never reused), so its dismissal is safe to delete.
    let dismissals: Vec<Path> = {
        let list = index.store.inner.list(Some(&keys::dismissals(ws)));
        futures::TryStreamExt::try_collect::<Vec<_>>(list)
            .await?
            .into_iter()
            .map(|m| m.location)
            .collect()
    };
    let names: Vec<String> = index
        .names_under(&keys::markers(ws))
        .await?
        .into_iter()
        .collect();
    let p = plan(&names, now, index.limits.ttl_ms, &HashSet::new());
    let mut sweep = Sweep {
        ws: ws.to_string(),
        markers: names.len(),
        ..Default::default()
    };
    for (id, reason) in p.delete {
        sweep.deletes.push((keys::marker(ws, &id), reason));
    }
    let verdicts: Vec<(ItemId, Verdict)> = futures::stream::iter(p.candidates)
        .map(|id| async move {
            let lookup = index.lookup(ws, &id).await;
            let v = judge(&id, lookup, now, &index.limits);
            (id, v)
        })
        .buffer_unordered(SWEEP_CONCURRENCY)
        .collect()
        .await;
    let mut alive: HashSet<String> = HashSet::new();
    for (id, verdict) in verdicts {
        match verdict {
            Verdict::Dead(reason) => sweep.deletes.push((keys::marker(ws, &id), reason)),
            Verdict::Unknown(_) => {
                sweep.unknown += 1;
                alive.insert(id.to_string());
            }
            Verdict::Live(_) | Verdict::Pending => {
                alive.insert(id.to_string());
            }
        }
    }
    for path in dismissals {
        let Some(id) = path.filename().and_then(|n| ItemId::parse(n).ok()) else {
            continue;
        };
        let young = now.saturating_sub(id.created_ms()) <= index.limits.grace_ms;
        if !alive.contains(&id.to_string()) && !young {
            sweep.deletes.push((path, Reason::OrphanDismissal));
        }
    }
    sweep.deletes.sort_by(|a, b| a.0.as_ref().cmp(b.0.as_ref()));
    if !dry_run {
        let report = index
            .apply(&crate::index::Prune {
                deletes: sweep.deletes.clone(),
            })
            .await;
        sweep.failed = report.failed;
    }
    Ok(sweep)
}

/// Every workspace that has markers.
pub async fn workspaces(index: &Index) -> Result<Vec<Workspace>> {
    let listing = index
        .store
        .inner
        .list_with_delimiter(Some(&keys::all_markers()))
        .await?;
    Ok(listing
        .common_prefixes
        .iter()
        .filter_map(|p| p.filename().and_then(|n| Workspace::parse(n).ok()))
        .collect())
}
