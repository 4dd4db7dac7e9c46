//! The marker index: one empty object per item under `ws/{ws}/markers/`, never a shared list.
//!
//! Guarantees:
//! - A write touches only its own keys and reads nothing shared, so concurrent producers never
//!   overwrite each other.
//! - A read never treats an error as "empty": a failed listing is an error for the caller and
//!   deletes nothing; a record that cannot be read makes the page `partial` and keeps its marker.
//! - Only markers confirmed dead (expired by name, superseded by a newer run, finished long ago,
//!   recordless past the grace period) are deleted, one key at a time, after the answer.

use super::cache::ReadCache;
use super::clock_check::ClockCheck;
use super::copy::Unread;
use super::prune::Prune;
use super::store::{Retry, Scope, Store};
use crate::index::Clock;
use crate::index::ItemId;
use crate::index::Limits;
use crate::index::Workspace;
use crate::index::{IndexError, Result};
use app::contract::RecentPage;
use bytes::Bytes;
use object_store::ObjectStore;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

#[derive(Clone)]
pub struct Index {
    pub(super) store: Store,
    pub(super) limits: Limits,
    pub(super) default_cap: u32,
    /// `pub(crate)` only while `demo.rs` reads it as a field: [`Index::clock`] is the way in.
    pub(super) clock: Arc<dyn Clock>,
    /// Shared by concurrent reads (`serve` turns it on; tests and the janitor read directly).
    pub(super) cache: Option<Arc<ReadCache>>,
    /// Checks this server's clock against the store's before deleting anything by age
    /// (`serve` and `prune` turn it on; tests with manual clocks leave it off).
    pub(super) clock_check: Option<Arc<ClockCheck>>,
    /// A live copy's records listed but not read yet (`copy.rs`): its read path stops before
    /// the first that a page needs and names them. `None` for an index on the store.
    pub(super) unread: Option<Arc<Unread>>,
}

/// A page read: the whole page, plus what the reader learned on the way.
#[derive(Debug)]
pub struct PageRead {
    pub page: SharedPage,
    pub prune: Prune,
    /// How many keys the listing took from the store (on the clouds, all it returned): what a
    /// read costs in listing, whatever the workspace's size.
    pub listed: usize,
    /// The records this page needs next that a live copy has not read (newest first): the read
    /// stopped before them, and the page is not to be shown until they are read. Always empty
    /// from an index on the store.
    pub unread: Vec<ItemId>,
}

/// A page, shared by every request the read cache answers with it, and written as JSON once:
/// copying and serialising the page for each request was a fifth of a cached read's CPU
/// (BENCHMARKS.md, section 3).
#[derive(Debug, Clone)]
pub struct SharedPage(Arc<(RecentPage, OnceLock<Bytes>)>);

impl SharedPage {
    pub fn new(page: RecentPage) -> Self {
        SharedPage(Arc::new((page, OnceLock::new())))
    }

    /// The page as the REST API's JSON.
    pub fn json(&self) -> Bytes {
        let (page, json) = &*self.0;
        json.get_or_init(|| {
            serde_json::to_vec(page)
                .expect("a page is strings, numbers and booleans")
                .into()
        })
        .clone()
    }

    /// The page itself, copied only if another request holds it too.
    pub fn into_page(self) -> RecentPage {
        Arc::try_unwrap(self.0).map_or_else(|shared| shared.0.clone(), |(page, _)| page)
    }
}

impl std::ops::Deref for SharedPage {
    type Target = RecentPage;

    fn deref(&self) -> &RecentPage {
        &self.0 .0
    }
}

impl Index {
    /// The index on the store a `PICKUP_STORE` URL names (`file://./data`, `memory://`,
    /// `s3://bucket/prefix`, `gs://…`, `az://…`; cloud options from the usual `AWS_*`,
    /// `GOOGLE_*` and `AZURE_*` variables), judging by `limits`, `default_cap` cards a page
    /// unless asked otherwise, telling the time by `clock`.
    pub fn open(
        url: &str,
        limits: Limits,
        default_cap: u32,
        clock: Arc<dyn Clock>,
    ) -> Result<Self> {
        Self::open_with(url, &[], limits, default_cap, clock)
    }

    /// As [`Index::open`], with backend options (named as the environment names them:
    /// `AWS_ENDPOINT`, …) that win over the environment's.
    pub fn open_with(
        url: &str,
        options: &[(String, String)],
        limits: Limits,
        default_cap: u32,
        clock: Arc<dyn Clock>,
    ) -> Result<Self> {
        let store = Store::open_overriding(url, options)
            .map_err(|e| IndexError::StoreUrl(e.to_string()))?;
        Ok(Index::new(store, limits, default_cap, clock))
    }

    /// The same index with a layer between it and its store, the way object_store's own
    /// wrappers compose (a fault injector, a request counter, added latency): `layer` is given
    /// the object store as the index speaks to it now and returns what it is to speak to.
    /// Listings then go through the layer's `list`, not a paginated listing the layer would not
    /// see. The read cache, if any, is left behind (it read through the old way).
    pub fn through(
        mut self,
        layer: impl FnOnce(Arc<dyn ObjectStore>) -> Arc<dyn ObjectStore>,
    ) -> Self {
        self.store = self.store.layer(layer);
        self.cache = None;
        self
    }

    pub(super) fn new(
        store: Store,
        limits: Limits,
        default_cap: u32,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Index {
            store,
            limits,
            default_cap,
            clock,
            cache: None,
            clock_check: None,
            unread: None,
        }
    }

    /// The same index, telling the time by `clock`, exactly: without the clock check, whose
    /// measured offset belongs to the clock it replaces (the demo's seed writes "20 minutes
    /// ago" on purpose, and must not be re-dated by the store's clock).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self.clock_check = None;
        self
    }

    /// The same index, judging ages by `limits`.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Retry a transient write fault `retries` times, waiting from `min_delay` to `max_delay`
    /// (jittered, exponential) between tries; the default is 6 tries from 50 ms to 2 s.
    pub fn with_retry(mut self, retries: usize, min_delay: Duration, max_delay: Duration) -> Self {
        self.store = self.store.with_retry(Retry {
            retries,
            min_delay,
            max_delay,
        });
        self
    }

    /// The URL the store was opened from, for logs.
    pub fn store_url(&self) -> &str {
        self.store.url()
    }

    /// Whether the store answers: an error (never "ready") when it refuses or does not answer;
    /// [`IndexError::refusal`] tells a refusal an operator must fix.
    pub async fn ready(&self) -> Result<()> {
        Ok(self.store.ready().await?)
    }

    /// Moves every key of the old kind-first layout (`markers/{ws}/{id}`) to its name under
    /// `ws/{ws}/`: answers how many moved. An older server may still be writing the old layout
    /// during an upgrade, so `serve` and the janitor call it again.
    pub async fn move_legacy(&self) -> Result<usize> {
        Ok(self.store.move_legacy().await?.moved)
    }

    /// What [`Index::move_legacy`] would move: each key of the old layout, by its old path,
    /// and the key it becomes.
    pub async fn legacy_keys(&self) -> Result<Vec<(String, crate::index::Key)>> {
        let keys = self.store.legacy_keys().await?;
        Ok(keys
            .into_iter()
            .filter_map(|k| Some((k.legacy_path()?.to_string(), k)))
            .collect())
    }

    /// Whether `ws` lists any marker (one small listing, stopped at the first).
    pub async fn has_markers(&self, ws: &Workspace) -> Result<bool> {
        let mut markers = self.store.pages(&Scope::Markers(ws.clone()), None);
        // A page may be empty and still not the last: read on until a key or the end.
        while let Some(found) = markers.next(1).await? {
            if !found.keys.is_empty() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Every item `ws` lists (its markers, in one listing), newest first; names that are not
    /// ids are left out.
    pub async fn items(&self, ws: &Workspace) -> Result<Vec<ItemId>> {
        let found = self.store.list(&Scope::Markers(ws.clone())).await?;
        let mut ids: Vec<ItemId> = found.ids().cloned().collect();
        ids.sort();
        Ok(ids)
    }

    /// Every workspace that has any key Pickup writes.
    pub async fn workspaces(&self) -> Result<Vec<Workspace>> {
        Ok(self.store.workspaces().await?.into_iter().collect())
    }

    /// The read path's time limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Cards per page unless the caller asks otherwise.
    pub fn default_cap(&self) -> u32 {
        self.default_cap
    }

    /// The clock this index tells the time by.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Check this server's clock against the store's before any delete by age.
    pub fn with_clock_check(mut self) -> Self {
        self.clock_check = Some(Arc::default());
        self
    }

    /// Share listings and record reads between requests for up to `fresh_for`.
    pub fn with_read_cache(mut self, fresh_for: std::time::Duration) -> Self {
        self.cache =
            (!fresh_for.is_zero()).then(|| Arc::new(ReadCache::new(self.store.clone(), fresh_for)));
        self
    }

    /// A write to `ws` through this server: what the read cache holds of it is stale now.
    pub(super) fn invalidate_cache(&self, ws: &Workspace) {
        if let Some(cache) = &self.cache {
            cache.invalidate(ws);
        }
    }

    /// How long until `id` is past the TTL, which deletes it by its name alone, heartbeats or
    /// not: a producer that keeps an item alive longer registers a new run of its key before
    /// then (`pickup run` does, at half of this).
    pub fn expires_in(&self, id: &ItemId) -> std::time::Duration {
        let age = self.now_for_writes_cached().saturating_sub(id.created_ms());
        std::time::Duration::from_millis(self.limits.ttl_ms.saturating_sub(age))
    }

    /// An id a caller sent: well formed, and not dated later than now plus the clock skew
    /// (no server made such an id; it would look young forever). "Now" is the time writes are
    /// dated by, so a clock stepped back never refuses the ids it made before the step.
    pub fn item_id(&self, raw: &str) -> Result<ItemId> {
        let id = ItemId::parse(raw)?;
        if let Some(ahead_ms) = self
            .limits
            .too_far_ahead(id.created_ms(), self.now_for_writes_cached())
        {
            return Err(IndexError::FutureId {
                ahead_ms,
                max_skew_ms: self.limits.max_skew_ms,
            });
        }
        Ok(id)
    }
}
