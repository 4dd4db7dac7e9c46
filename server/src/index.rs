//! The marker index: one empty object per item under `markers/{ws}/`, never a shared list.
//!
//! Guarantees:
//! - A write touches only its own keys and reads nothing shared, so concurrent producers never
//!   overwrite each other.
//! - A read never treats an error as "empty": a failed listing is an error for the caller and
//!   deletes nothing; a record that cannot be read makes the page `partial` and keeps its marker.
//! - Only markers confirmed dead (expired by name, superseded by a newer run, finished long ago,
//!   recordless past the grace period) are deleted, one key at a time, after the answer.

use crate::cache::{ReadCache, MISSING};
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::id::ItemId;
use crate::names::{UserId, Workspace};
use crate::plan::{Listing, Planner, Reason};
use crate::record::{ItemRecord, ItemUpdate, NewItem};
use crate::store::{keys, ListOrder, Store};
use crate::verdict::{judge, Limits, Lookup, Verdict};
use app::model::{Card, Filter, Owner, RecentPage, MAX_CAP};
use futures::{FutureExt, StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};
use std::collections::HashSet;
use std::sync::Arc;

/// How many times register moves `created_ms` on by 1 ms when its id is taken.
const CREATE_ATTEMPTS: u64 = 5;

#[derive(Clone)]
pub struct Index {
    pub store: Store,
    pub limits: Limits,
    pub default_cap: u32,
    pub clock: Arc<dyn Clock>,
    /// Shared by concurrent reads (`serve` turns it on; tests and the janitor read directly).
    pub cache: Option<Arc<ReadCache>>,
}

/// Markers (and dismissals) a read found dead, to delete after the answer is sent.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Prune {
    pub deletes: Vec<(Path, Reason)>,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PruneReport {
    pub deleted: usize,
    pub failed: usize,
}

/// A whole page, plus what the reader learned on the way.
#[derive(Debug)]
pub struct Read {
    pub page: RecentPage,
    pub prune: Prune,
}

impl Index {
    pub fn new(store: Store, limits: Limits, default_cap: u32, clock: Arc<dyn Clock>) -> Self {
        Index {
            store,
            limits,
            default_cap,
            clock,
            cache: None,
        }
    }

    /// Share listings and record reads between requests for up to `fresh_for`.
    pub fn with_read_cache(mut self, fresh_for: std::time::Duration) -> Self {
        self.cache = (!fresh_for.is_zero()).then(|| Arc::new(ReadCache::new(fresh_for)));
        self
    }

    fn wrote(&self, ws: &Workspace) {
        if let Some(cache) = &self.cache {
            cache.invalidate(ws.as_str());
        }
    }

    // ---- write path -------------------------------------------------------------------------

    /// Write the record with a create-only put, then the empty marker. Reads nothing shared.
    pub async fn register(
        &self,
        ws: &Workspace,
        item: &NewItem,
        owner: Owner,
    ) -> Result<ItemRecord> {
        let key = crate::names::SubKey::parse(&item.key)?;
        let now = self.clock.now_ms();
        for attempt in 0..CREATE_ATTEMPTS {
            let id = ItemId::new(now + attempt, key.clone())?;
            let record = ItemRecord::new(ws, &id, item, owner.clone())?;
            let body = serde_json::to_vec(&record).expect("a record serialises");
            let create = PutOptions {
                mode: PutMode::Create,
                ..Default::default()
            };
            match self
                .store
                .inner
                .put_opts(&keys::item(ws, &id), body.into(), create)
                .await
            {
                Ok(_) => {
                    self.store
                        .inner
                        .put(&keys::marker(ws, &id), PutPayload::new())
                        .await?;
                    self.wrote(ws);
                    return Ok(record);
                }
                Err(object_store::Error::AlreadyExists { .. }) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(Error::Store(object_store::Error::Generic {
            store: "pickup",
            source: format!("{CREATE_ATTEMPTS} ids for key {key} around {now} ms were all taken")
                .into(),
        }))
    }

    /// Write the whole record without reading it. With `if_match` (an ETag the store gave for
    /// this record), the write is a compare-and-set; a store that cannot do that says so (501).
    pub async fn update(
        &self,
        ws: &Workspace,
        id: &ItemId,
        up: &ItemUpdate,
        caller: Owner,
        if_match: Option<String>,
    ) -> Result<(ItemRecord, Option<String>)> {
        let record = ItemRecord::updated(ws, id, up, caller, self.clock.now_ms())?;
        let body: PutPayload = serde_json::to_vec(&record)
            .expect("a record serialises")
            .into();
        let mode = match if_match {
            Some(e_tag) => PutMode::Update(UpdateVersion {
                e_tag: Some(e_tag),
                version: None,
            }),
            None => PutMode::Overwrite,
        };
        let path = keys::item(ws, id);
        let res = self
            .store
            .inner
            .put_opts(
                &path,
                body,
                PutOptions {
                    mode,
                    ..Default::default()
                },
            )
            .await?;
        self.wrote(ws);
        Ok((record, res.e_tag))
    }

    /// The record and its store version (ETag), for a later `If-Match`.
    pub async fn get(&self, ws: &Workspace, id: &ItemId) -> Result<(ItemRecord, Option<String>)> {
        let got = self.store.inner.get(&keys::item(ws, id)).await?;
        let e_tag = got.meta.e_tag.clone();
        let bytes = got.bytes().await?;
        let record = serde_json::from_slice(&bytes).map_err(|e| {
            Error::Store(object_store::Error::Generic {
                store: "pickup",
                source: Box::new(e),
            })
        })?;
        Ok((record, e_tag))
    }

    /// Delete the marker first (the item leaves every reader's view), then the record.
    pub async fn remove(&self, ws: &Workspace, id: &ItemId) -> Result<()> {
        ignore_not_found(self.store.inner.delete(&keys::marker(ws, id)).await)?;
        ignore_not_found(self.store.inner.delete(&keys::item(ws, id)).await)?;
        self.wrote(ws);
        Ok(())
    }

    /// A fact under the viewer's own key: "I dismissed this item".
    pub async fn dismiss(&self, ws: &Workspace, user: &UserId, id: &ItemId) -> Result<()> {
        self.store
            .inner
            .put(&keys::dismissal(ws, user, id), PutPayload::new())
            .await?;
        self.wrote(ws);
        Ok(())
    }

    // ---- read path --------------------------------------------------------------------------

    /// DESIGN.md steps 2–7. Deletes nothing itself: the caller applies [`Read::prune`] after
    /// answering (step 8).
    pub async fn recent(
        &self,
        ws: &Workspace,
        viewer: &UserId,
        filter: Filter,
        cap: Option<u32>,
    ) -> Result<Read> {
        let cap = cap.unwrap_or(self.default_cap).clamp(1, MAX_CAP) as usize;
        let budget = 3 * cap;
        let now = self.clock.now_ms();
        let dismissed = self.dismissals(ws, viewer).await?;

        let (plan, listing_cut) = self.plan_markers(ws, now, &dismissed, budget).await?;
        // Markers to delete, by id: planned by name, then found dead by their records.
        let mut dead: Vec<(ItemId, Reason)> = plan.delete.clone();
        for name in &plan.unparsable {
            tracing::warn!(ws = %ws, name, "skipping a marker whose name is not an id");
        }

        let mut cards: Vec<Card> = Vec::new();
        let mut partial = false;
        let mut resolved = 0;
        for batch in plan.candidates.chunks(cap) {
            if cards.len() >= cap || resolved >= budget {
                break;
            }
            let batch = &batch[..batch.len().min(budget - resolved)];
            resolved += batch.len();
            let lookups =
                futures::future::join_all(batch.iter().map(|id| self.lookup(ws, id))).await;
            for (id, lookup) in batch.iter().zip(lookups) {
                match judge(id, lookup, now, &self.limits) {
                    Verdict::Live(card) => {
                        if filter == Filter::All || card.owner.sub == viewer.as_str() {
                            cards.push(*card);
                        }
                    }
                    Verdict::Pending => {}
                    Verdict::Dead(reason) => dead.push((id.clone(), reason)),
                    Verdict::Unknown(why) => {
                        tracing::warn!(ws = %ws, id = %id, why, "could not resolve an item; keeping its marker");
                        partial = true;
                    }
                }
            }
        }
        let mut prune = Prune::default();
        // A viewer's dismissals of markers that are going away go with them.
        let orphaned: Vec<ItemId> = dead
            .iter()
            .filter(|(id, _)| dismissed.contains(&id.to_string()))
            .map(|(id, _)| id.clone())
            .collect();
        for (id, reason) in dead {
            prune.deletes.push((keys::marker(ws, &id), reason));
        }
        for id in orphaned {
            prune
                .deletes
                .push((keys::dismissal(ws, viewer, &id), Reason::OrphanDismissal));
        }
        let more = cards.len() > cap || resolved < plan.candidates.len() || listing_cut;
        cards.truncate(cap);
        let page = RecentPage {
            cards,
            more,
            partial,
            generated_at: crate::record::ms_to_time(now)
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        };
        Ok(Read { page, prune })
    }

    /// List the workspace's markers into a plan. On a sorted store the listing stops once the
    /// plan holds `budget` candidates (the second value says it stopped early).
    async fn plan_markers(
        &self,
        ws: &Workspace,
        now: u64,
        dismissed: &HashSet<String>,
        budget: usize,
    ) -> Result<(crate::plan::Plan, bool)> {
        let ttl = self.limits.ttl_ms;
        if self.store.order == ListOrder::Sorted {
            let mut planner = Planner::new(now, ttl, dismissed, budget);
            let mut listing = self.store.inner.list(Some(&keys::markers(ws)));
            while let Some(meta) = listing.next().await {
                let meta = meta?;
                let Some(name) = meta.location.filename() else {
                    continue;
                };
                if !planner.push(name) {
                    // Not in order after all: list everything again and plan from it sorted.
                    tracing::warn!(store = %self.store.url, "listing was not in key order; sorting it");
                    let all = self.marker_listing(ws).await?;
                    return Ok((all.plan(now, ttl, dismissed, usize::MAX).0, false));
                }
                if planner.is_full() {
                    return Ok((planner.finish(), true));
                }
            }
            Ok((planner.finish(), false))
        } else {
            // The whole listing (the file system has no order); planning stops at the budget,
            // so what lies beyond is left to the janitor.
            let listing = self.marker_listing(ws).await?;
            Ok(listing.plan(now, ttl, dismissed, budget))
        }
    }

    /// Every marker of `ws`, parsed and sorted (through the read cache when there is one).
    async fn marker_listing(&self, ws: &Workspace) -> Result<Arc<Listing>> {
        let (this, prefix) = (self.clone(), keys::markers(ws));
        let list = move || async move {
            let names: Vec<String> = this.names_under(&prefix).await?.into_iter().collect();
            Ok(Arc::new(Listing::from_names(&names)))
        };
        match &self.cache {
            Some(cache) => cache
                .listing(ws.as_str(), || {
                    list()
                        .map(|r: Result<_>| r.map_err(|e| e.to_string()))
                        .boxed()
                })
                .await
                .map_err(cached_error),
            None => list().await,
        }
    }

    /// The ids this viewer dismissed in `ws` (through the read cache when there is one).
    async fn dismissals(&self, ws: &Workspace, viewer: &UserId) -> Result<Arc<HashSet<String>>> {
        let (this, prefix) = (self.clone(), keys::dismissals_of(ws, viewer));
        let list = move || async move { Ok(Arc::new(this.names_under(&prefix).await?)) };
        match &self.cache {
            Some(cache) => cache
                .names(&format!("{ws}/dismissed/{viewer}"), || {
                    list()
                        .map(|r: Result<_>| r.map_err(|e| e.to_string()))
                        .boxed()
                })
                .await
                .map_err(cached_error),
            None => list().await,
        }
    }

    /// Read one record (through the read cache when there is one). Errors are `Failed`, never
    /// `NotFound`.
    pub(crate) async fn lookup(&self, ws: &Workspace, id: &ItemId) -> Lookup {
        let Some(cache) = &self.cache else {
            return read_record(&self.store, &keys::item(ws, id)).await;
        };
        let store = self.store.clone();
        let path = keys::item(ws, id);
        let fetch = move || {
            async move {
                match read_record(&store, &path).await {
                    Lookup::Found(b) => Ok(b),
                    Lookup::NotFound => Err(MISSING.to_string()),
                    Lookup::Failed(e) => Err(e),
                }
            }
            .boxed()
        };
        match cache.record(&format!("{ws}/{id}"), fetch).await {
            Ok(b) => Lookup::Found(b),
            Err(e) if e == MISSING => Lookup::NotFound,
            Err(e) => Lookup::Failed(e),
        }
    }

    /// The last path segment of every object under `prefix`. An error is an error, never empty.
    pub async fn names_under(&self, prefix: &Path) -> Result<HashSet<String>> {
        let metas: Vec<_> = self.store.inner.list(Some(prefix)).try_collect().await?;
        Ok(metas
            .into_iter()
            .filter_map(|m| m.location.filename().map(str::to_string))
            .collect())
    }

    /// Step 8: delete what a read found dead, one key at a time. A failure is logged and
    /// happens again on a later read; a key someone else already deleted is fine.
    pub async fn apply(&self, prune: &Prune) -> PruneReport {
        let mut report = PruneReport::default();
        for (path, reason) in &prune.deletes {
            match ignore_not_found(self.store.inner.delete(path).await) {
                Ok(()) => {
                    tracing::debug!(%path, %reason, "pruned");
                    report.deleted += 1;
                }
                Err(e) => {
                    tracing::warn!(%path, error = %e, "prune failed; a later read will retry");
                    report.failed += 1;
                }
            }
        }
        if let Some(cache) = &self.cache {
            // markers/{ws}/… and dismissed/{ws}/…: those workspaces' listings are stale now.
            for path in prune.deletes.iter().map(|(p, _)| p) {
                if let Some(ws) = path.parts().nth(1) {
                    cache.invalidate(ws.as_ref());
                }
            }
        }
        report
    }
}

/// A store error shared through the cache, as text.
fn cached_error(message: String) -> Error {
    Error::Store(object_store::Error::Generic {
        store: "pickup",
        source: message.into(),
    })
}

async fn read_record(store: &Store, path: &Path) -> Lookup {
    let got = match store.inner.get(path).await {
        Ok(got) => got,
        Err(object_store::Error::NotFound { .. }) => return Lookup::NotFound,
        Err(e) => return Lookup::Failed(e.to_string()),
    };
    match got.bytes().await {
        Ok(b) => Lookup::Found(b),
        Err(e) => Lookup::Failed(e.to_string()),
    }
}

fn ignore_not_found(r: object_store::Result<()>) -> object_store::Result<()> {
    match r {
        Err(object_store::Error::NotFound { .. }) => Ok(()),
        other => other,
    }
}
