//! The designs Pickup is measured against: one shared JSON list per workspace (newest first),
//! next to the same per-item records the marker index uses.
//!
//! - [`SharedList::naive`]: read, modify, write back, unconditionally (the design Pickup
//!   replaces; the same as `server/tests/common/naive.rs`, copied here, not imported).
//! - [`SharedList::cas`]: compare-and-set done right. The version always comes from a real read
//!   of the store (a read without an ETag or version is an error, never a plain write); the first
//!   write is create-only; every retry re-reads and recomputes the whole change; the update names
//!   the ETag and version of that read; the records of pruned items are deleted only after the
//!   winning save.

use crate::common::{self, lookup, ws_name};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};
use pickup::index::core::plan::Budget;
use pickup::index::core::verdict::{judge, Verdict};
use pickup::index::ItemId;
use pickup::index::Limits;
use pickup::index::Workspace;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug)]
pub enum ListError {
    /// The run's deadline passed while a compare-and-set was still losing races.
    Abandoned,
    Store(object_store::Error),
    Other(String),
}

impl From<object_store::Error> for ListError {
    fn from(e: object_store::Error) -> Self {
        ListError::Store(e)
    }
}

impl std::fmt::Display for ListError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ListError::Abandoned => f.write_str("abandoned at the deadline"),
            ListError::Store(e) => write!(f, "{e}"),
            ListError::Other(e) => f.write_str(e),
        }
    }
}

pub struct SharedList {
    /// The bare store, for the list object (not a key Pickup writes).
    pub store: Arc<dyn ObjectStore>,
    /// The same store, for the items' records (where Pickup keeps them: `common::record_path`).
    pub path: Path,
    pub ws: Workspace,
    pub limits: Limits,
    pub cas: bool,
    pub backoff: Backoff,
    /// Compare-and-set attempts that lost a race (and were retried).
    pub retries: AtomicU64,
}

/// The list as read, with the version that read saw.
struct Versioned {
    ids: Vec<String>,
    version: UpdateVersion,
}

impl SharedList {
    fn new(store: Arc<dyn ObjectStore>, limits: Limits, cas: bool, backoff: Backoff) -> Self {
        let ws = ws_name();
        SharedList {
            store,
            path: Path::from(format!("lists/{ws}.json")),
            ws,
            limits,
            cas,
            backoff,
            retries: AtomicU64::new(0),
        }
    }

    pub fn naive(store: Arc<dyn ObjectStore>, limits: Limits) -> Self {
        let none = Backoff {
            base_us: 0,
            cap_us: 0,
        };
        Self::new(store, limits, false, none)
    }

    pub fn cas(store: Arc<dyn ObjectStore>, limits: Limits, backoff: Backoff) -> Self {
        Self::new(store, limits, true, backoff)
    }

    fn parse(bytes: &[u8]) -> Result<Vec<String>, ListError> {
        serde_json::from_slice(bytes).map_err(|e| ListError::Other(format!("list: {e}")))
    }

    /// Naive read: a missing list is empty.
    async fn read_plain(&self) -> Result<Vec<String>, ListError> {
        match self.store.get(&self.path).await {
            Ok(got) => Self::parse(&got.bytes().await?),
            Err(object_store::Error::NotFound { .. }) => Ok(Vec::new()),
            Err(e) => Err(e.into()),
        }
    }

    /// Compare-and-set read: `None` when the list does not exist yet (so the write must be
    /// create-only); otherwise the ids and the version this very read returned.
    async fn read_versioned(&self) -> Result<Option<Versioned>, ListError> {
        let got = match self.store.get(&self.path).await {
            Ok(got) => got,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let version = UpdateVersion {
            e_tag: got.meta.e_tag.clone(),
            version: got.meta.version.clone(),
        };
        if version.e_tag.is_none() && version.version.is_none() {
            // Never let a missing version fall through to an unconditional write.
            return Err(ListError::Other(
                "the store returned no ETag and no version: cannot compare-and-set".into(),
            ));
        }
        let ids = Self::parse(&got.bytes().await?)?;
        Ok(Some(Versioned { ids, version }))
    }

    async fn write_plain(&self, ids: &[String]) -> Result<(), ListError> {
        let body = serde_json::to_vec(ids).expect("ids serialise");
        self.store.put(&self.path, PutPayload::from(body)).await?;
        Ok(())
    }

    /// One compare-and-set attempt: create-only when the read found no list, else an update
    /// conditional on the read's version. `Ok(false)`: lost the race.
    async fn try_save(&self, read: Option<&Versioned>, ids: &[String]) -> Result<bool, ListError> {
        let mode = match read {
            None => PutMode::Create,
            Some(v) => PutMode::Update(v.version.clone()),
        };
        let body = PutPayload::from(serde_json::to_vec(ids).expect("ids serialise"));
        let opts = PutOptions {
            mode,
            ..Default::default()
        };
        match self.store.put_opts(&self.path, body, opts).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::Precondition { .. })
            | Err(object_store::Error::AlreadyExists { .. }) => {
                self.retries.fetch_add(1, Ordering::Relaxed);
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Producer: add `id` at the head of the list.
    pub async fn register(&self, id: &str, deadline: Instant) -> Result<(), ListError> {
        if !self.cas {
            let mut ids = self.read_plain().await?;
            ids.insert(0, id.to_string());
            return self.write_plain(&ids).await;
        }
        let mut lost = 0u32;
        loop {
            let read = self.read_versioned().await?;
            // The whole change, recomputed from this read.
            let mut ids = read.as_ref().map(|r| r.ids.clone()).unwrap_or_default();
            if !ids.iter().any(|i| i == id) {
                ids.insert(0, id.to_string());
            }
            if self.try_save(read.as_ref(), &ids).await? {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(ListError::Abandoned);
            }
            lost += 1;
            self.backoff.wait(lost).await;
        }
    }

    /// Reader: resolve the newest entries like `recent` does (N = 8 at a time, at most 3N, until
    /// N are live), drop the dead from the list, then delete their records. Returns how many
    /// entries it dropped.
    pub async fn read_and_prune(&self, now_ms: u64, deadline: Instant) -> Result<usize, ListError> {
        let (ids, mut read) = if self.cas {
            match self.read_versioned().await? {
                None => return Ok(0),
                Some(v) => (v.ids.clone(), Some(v)),
            }
        } else {
            (self.read_plain().await?, None)
        };
        let dead = self.resolve_dead(&ids, now_ms).await;
        if !self.cas {
            // Read, drop the dead, write back: whatever was added meanwhile is overwritten.
            let kept: Vec<String> = ids.into_iter().filter(|i| !dead.contains(i)).collect();
            self.write_plain(&kept).await?;
            self.delete_records(&dead).await;
            return Ok(dead.len());
        }
        if dead.is_empty() {
            return Ok(0);
        }
        let mut lost = 0u32;
        loop {
            let current = read.as_ref().expect("a versioned read");
            let kept: Vec<String> = current
                .ids
                .iter()
                .filter(|i| !dead.contains(*i))
                .cloned()
                .collect();
            let removed: HashSet<String> = current
                .ids
                .iter()
                .filter(|i| dead.contains(*i))
                .cloned()
                .collect();
            if removed.is_empty() {
                return Ok(0); // someone else already dropped them
            }
            if self.try_save(Some(current), &kept).await? {
                // Follow-up deletes only after the winning save.
                self.delete_records(&removed).await;
                return Ok(removed.len());
            }
            if Instant::now() >= deadline {
                return Err(ListError::Abandoned);
            }
            lost += 1;
            self.backoff.wait(lost).await;
            match self.read_versioned().await? {
                Some(v) => read = Some(v),
                None => return Ok(0),
            }
        }
    }

    async fn resolve_dead(&self, ids: &[String], now_ms: u64) -> HashSet<String> {
        const CAP: usize = 8;
        // The same budget as `recent`'s.
        const BUDGET: usize = Budget::RESOLVES_PER_CARD * CAP;
        let mut dead = HashSet::new();
        let mut live = 0;
        let parsed: Vec<ItemId> = ids
            .iter()
            .filter_map(|i| ItemId::parse(i).ok())
            .take(BUDGET)
            .collect();
        for batch in parsed.chunks(CAP) {
            if live >= CAP {
                break;
            }
            let lookups =
                futures::future::join_all(batch.iter().map(|id| lookup(&self.store, &self.ws, id)))
                    .await;
            for (id, l) in batch.iter().zip(lookups) {
                match judge(id, l, now_ms, &self.limits) {
                    Verdict::Live(_) => live += 1,
                    Verdict::Dead(_) => {
                        dead.insert(id.to_string());
                    }
                    Verdict::Pending | Verdict::Unknown(_) => {}
                }
            }
        }
        dead
    }

    async fn delete_records(&self, ids: &HashSet<String>) {
        for id in ids {
            if let Ok(id) = ItemId::parse(id) {
                let _ = self.store.delete(&common::record_path(&self.ws, &id)).await;
            }
        }
    }

    /// Everything the list holds now.
    pub async fn present(&self) -> Result<HashSet<String>, ListError> {
        Ok(self.read_plain().await?.into_iter().collect())
    }
}

/// "Full jitter" exponential back-off of the compare-and-set list: after the n-th lost race in a
/// row, a uniform wait in [0, min(base · 2^n, cap)].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Backoff {
    pub base_us: u64,
    pub cap_us: u64,
}

impl Backoff {
    async fn wait(self, n: u32) {
        let most = self
            .base_us
            .saturating_mul(1u64 << n.min(20))
            .min(self.cap_us)
            .max(1);
        let jitter = crate::common::rand_u64() % (most + 1);
        tokio::time::sleep(Duration::from_micros(jitter)).await;
    }
}

/// Whether the store does `PutMode::Update` at all (the local file system does not).
pub async fn supports_update(store: &Arc<dyn ObjectStore>) -> bool {
    let probe = Path::from("probe/conditional-update");
    let opts = PutOptions {
        mode: PutMode::Update(UpdateVersion {
            e_tag: Some("\"probe\"".into()),
            version: None,
        }),
        ..Default::default()
    };
    !matches!(
        store.put_opts(&probe, PutPayload::new(), opts).await,
        Err(object_store::Error::NotImplemented { .. })
            | Err(object_store::Error::NotSupported { .. })
    )
}
