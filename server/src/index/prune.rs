//! Deleting what a read or a sweep found dead: only markers confirmed dead (expired by name,
//! superseded by a newer run, finished long ago, recordless past the grace period), one key at
//! a time, after the answer.

use super::marker_index::Index;
use crate::index::Reason;
use crate::index::Workspace;
use crate::index::{Key, KeyKind};
use std::collections::BTreeMap;

/// Keys a read or a sweep found dead, to delete after the answer is sent. Deleting a
/// [`Key::Marker`] takes the item's record with it (marker first, so the item leaves every
/// reader's view before its record goes).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Prune {
    pub deletes: Vec<(Key, Reason)>,
    pub by: FoundBy,
}

/// Who found the keys of a [`Prune`] dead, for the operators' numbers.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum FoundBy {
    /// A read (`recent`, a live watcher's read).
    #[default]
    Read,
    /// A sweep of the janitor (the server's, or `pickup prune`).
    Janitor,
}

impl FoundBy {
    fn label(self) -> &'static str {
        match self {
            FoundBy::Read => "read",
            FoundBy::Janitor => "janitor",
        }
    }
}

/// What [`Index::apply`] deleted, per kind of key.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PruneReport {
    pub deleted: BTreeMap<KeyKind, usize>,
    pub failed: usize,
    /// Deletes by age not made because this server's clock disagrees with the store's.
    pub held: usize,
}

impl PruneReport {
    pub fn total(&self) -> usize {
        self.deleted.values().sum()
    }
}

impl Index {
    /// Step 8: delete what a read or a sweep found dead, one key at a time; a marker's record
    /// goes right after the marker. A failure is logged and happens again on a later read or
    /// sweep; a key someone else already deleted is fine.
    ///
    /// Deletes wait while this server's clock disagrees with the store's
    /// ([`Index::ages_trusted`]); they are counted in [`PruneReport::held`]. Supersede deletes
    /// wait too: they compare ids, and a server off the store's clock may have planned them
    /// against ids another clock dated.
    pub async fn apply(&self, prune: &Prune) -> PruneReport {
        let by = prune.by;
        use crate::metrics::{DELETIONS, DELETIONS_HELD, DELETION_FAILURES};
        let mut report = PruneReport::default();
        let mut touched: Vec<&Workspace> = Vec::new();
        let ages_trusted = prune.deletes.is_empty() || self.ages_trusted().await;
        let mut pins = AnyonesPins::default();
        for (key, reason) in &prune.deletes {
            if !ages_trusted {
                report.held += 1;
                metrics::counter!(DELETIONS_HELD, "by" => by.label()).increment(1);
                continue;
            }
            let mut doomed = vec![key.clone()];
            if let Key::Marker(ws, id) = key {
                // A pin outlasts keep-finished: the record of a pinned item stays (and the
                // janitor keeps it while pinned); one the pins cannot be listed for stays too.
                let pinned = *reason == Reason::FinishedLongAgo && pins.pinned(self, ws, id).await;
                if !pinned {
                    doomed.push(Key::Record(ws.clone(), id.clone()));
                }
            }
            for key in doomed {
                match self.store.delete(&key).await {
                    Ok(()) => {
                        tracing::debug!(%key, %reason, "pruned");
                        *report.deleted.entry(key.kind()).or_default() += 1;
                        metrics::counter!(DELETIONS, "by" => by.label(), "reason" => reason.label(), "kind" => key.kind().label())
                            .increment(1);
                    }
                    Err(e) => {
                        tracing::warn!(%key, error = %e, "prune failed; a later read or sweep will retry");
                        report.failed += 1;
                        metrics::counter!(DELETION_FAILURES, "by" => by.label()).increment(1);
                        // A record stays while its marker does: stop at the first failure.
                        break;
                    }
                }
            }
            if !touched.contains(&key.ws()) {
                touched.push(key.ws());
            }
        }
        for ws in touched {
            self.invalidate_cache(ws);
        }
        report
    }
}

/// Every viewer's pins of the workspaces a prune deletes finished items of, each listed once
/// (items finish long ago rarely: most prunes list none). A listing that fails counts as
/// pinned: nothing is deleted on the strength of an error.
#[derive(Default)]
struct AnyonesPins(
    std::collections::HashMap<Workspace, Option<std::collections::HashSet<crate::index::ItemId>>>,
);

impl AnyonesPins {
    async fn pinned(&mut self, index: &Index, ws: &Workspace, id: &crate::index::ItemId) -> bool {
        if !self.0.contains_key(ws) {
            let listed = index
                .store
                .list(&super::store::Scope::AllPins(ws.clone()))
                .await;
            let ids = listed.ok().map(|found| found.ids().cloned().collect());
            self.0.insert(ws.clone(), ids);
        }
        self.0[ws].as_ref().is_none_or(|ids| ids.contains(id))
    }
}
