//! The object store, and the only code in Pickup that speaks object_store. Everything else
//! names [`Key`]s and [`Scope`]s and gets typed answers ([`StoreError`]), through the index's
//! face ([`crate::index`] re-exports them; this module is not reachable beyond the index).
//!
//! - `key`: the key space (paths made and parsed back);
//! - `legacy`: keys of the old kind-first layout moved to their new names;
//! - `look`: a viewer's last look at a workspace, its body put and read;
//! - `open`: from a `PICKUP_STORE` URL to a store;
//! - `pages`: listings in pages sized to the reader;
//! - `retry`: transient faults retried, ambiguous writes settled by reading back;
//! - `version`: object versions and the `ETag` validators made of them.
//!
//! Built the way object_store's own wrapper stores are: around any `Arc<dyn ObjectStore>`
//! (tests wrap theirs in fault injectors), with the behaviour Pickup needs on top.

mod error;
mod key;
mod legacy;
mod look;
mod open;
mod pages;
mod retry;

pub(crate) use error::Result;
pub(super) use error::StoreError;
pub(super) use key::{Found, Scope};
pub(super) use look::{look_time, ListedLook};
pub(super) use pages::Paging;
pub(super) use retry::Retry;

use crate::index::{ItemId, Key, Version, Workspace};
use bytes::Bytes;
use error::is_transient;
use key::{LOOKED, ROOT};
use object_store::list::PaginatedListStore;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Whether a listing comes back in ascending key order, which lets the reader stop early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ListOrder {
    Sorted,
    Unsorted,
}

impl Version {
    fn of(got: &object_store::GetResult) -> Self {
        Version {
            e_tag: got.meta.e_tag.clone(),
            version: got.meta.version.clone(),
        }
    }
}

/// A key that never exists, under a prefix that never holds anything: what `ready` asks for.
/// Not a workspace's name (a leading dot never is), so no listing of workspaces meets it.
const READYZ: &str = "ws/.readyz";

/// The largest object [`Store::read`] takes: a record is at most a few kilobytes (its body is
/// bounded at 64 KiB on the way in), a marker empty.
const MAX_OBJECT_BYTES: u64 = 1 << 20;

#[derive(Clone)]
pub(super) struct Store {
    inner: Arc<dyn ObjectStore>,
    /// The paginated listing of the same store, on the clouds that have one.
    pages: Option<Paged>,
    order: ListOrder,
    /// The URL it was opened from, for logs.
    url: String,
    retry: Retry,
    /// Set once the store has said it cannot write conditionally on a version (the local file
    /// system): later such writes are refused here, without a request that is bound to fail.
    no_conditional_updates: Arc<std::sync::OnceLock<StoreError>>,
}

#[derive(Clone)]
struct Paged {
    store: Arc<dyn PaginatedListStore>,
    /// The prefix of the store's URL (`s3://bucket/{root}`), which `inner` adds itself.
    root: String,
    /// The most keys one page of this cloud's holds.
    most: usize,
}

/// An object read, with the version it was read at.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stored {
    pub bytes: Bytes,
    pub version: Version,
}

/// What a conditional write of a record expects to find.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Expect {
    /// Nothing: the write creates the key and fails with [`StoreError::Exists`] if it is there.
    Absent,
    /// This version: the write fails with [`StoreError::Precondition`] if it changed.
    Version(Version),
    /// Anything: a plain overwrite.
    Any,
}

impl Store {
    /// A store around any `ObjectStore`, listed through `ObjectStore::list`.
    pub(super) fn wrap(inner: Arc<dyn ObjectStore>, order: ListOrder, url: &str) -> Self {
        Store {
            inner,
            pages: None,
            order,
            url: url.into(),
            retry: Retry::default(),
            no_conditional_updates: Default::default(),
        }
    }

    /// List through `store`'s paginated listing instead: the same objects as `inner`, under
    /// `root` (the prefix `inner` adds itself, if it is a `PrefixStore`), in pages of at most
    /// `most` keys (the cloud's own limit).
    pub(super) fn with_pages(
        mut self,
        store: Arc<dyn PaginatedListStore>,
        root: &Path,
        most: usize,
    ) -> Self {
        self.pages = Some(Paged {
            store,
            root: root.as_ref().to_string(),
            most,
        });
        self
    }

    /// Put a layer between Pickup and the store, as object_store's own wrappers compose (a
    /// fault injector, a counter, added latency): `wrap` is given the store as it is and
    /// returns the layer. Listings then go through the layer's `list`, not a paginated listing
    /// the layer would not see.
    pub(crate) fn layer(
        mut self,
        wrap: impl FnOnce(Arc<dyn ObjectStore>) -> Arc<dyn ObjectStore>,
    ) -> Self {
        self.inner = wrap(self.inner.clone());
        self.pages = None;
        self
    }

    pub(super) fn with_retry(mut self, retry: Retry) -> Self {
        self.retry = retry;
        self
    }

    pub(super) fn url(&self) -> &str {
        &self.url
    }

    pub(super) fn order(&self) -> ListOrder {
        self.order
    }

    /// The most keys a page holds, when listings ask the store for pages of the size the
    /// reader needs (`None`: one plain listing).
    #[cfg(test)]
    fn page_most(&self) -> Option<usize> {
        self.pages.as_ref().map(|p| p.most)
    }

    // ---- reads ----------------------------------------------------------------------------

    /// A scope's keys, a page at a time; with `after`, only items older than that one.
    pub(super) fn pages(&self, scope: &Scope, after: Option<&ItemId>) -> Paging {
        Paging::new(self, scope, after)
    }

    /// A scope's keys, all of them.
    pub(super) async fn list(&self, scope: &Scope) -> Result<Found> {
        self.pages(scope, None).rest().await
    }

    /// A key's bytes and version, or `None` if it does not exist.
    pub(super) async fn read(&self, key: &Key) -> Result<Option<Stored>> {
        self.read_path(&key.path()).await
    }

    async fn read_path(&self, path: &Path) -> Result<Option<Stored>> {
        let _timer = Timer::start(Op::Get);
        match self.inner.get(path).await {
            Ok(got) => {
                // Bounded before the body is collected: the size is the GET's own metadata.
                if got.meta.size > MAX_OBJECT_BYTES {
                    return Err(StoreError::TooLarge {
                        key: path.to_string(),
                        size: got.meta.size,
                        limit: MAX_OBJECT_BYTES,
                    });
                }
                let version = Version::of(&got);
                Ok(Some(Stored {
                    bytes: got.bytes().await?,
                    version,
                }))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether a key exists, without reading it.
    pub(super) async fn exists(&self, key: &Key) -> Result<bool> {
        let _timer = Timer::start(Op::Head);
        match self.inner.head(&key.path()).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// A scope's keys with the version each was listed at (one listing, in key order): what a
    /// live watcher compares with its copy to read only what changed.
    pub(super) async fn list_versions(&self, scope: &Scope) -> Result<Vec<(Key, Version)>> {
        self.pages(scope, None).versions().await
    }

    /// Every workspace that has any key (one listing by directory of [`ROOT`], and one of
    /// [`LOOKED`]: a workspace whose items are all gone still has its viewers' looks, which
    /// the janitor sweeps). Names that are not workspaces are skipped and logged.
    pub(super) async fn workspaces(&self) -> Result<BTreeSet<Workspace>> {
        let mut found = BTreeSet::new();
        for root in [ROOT, LOOKED] {
            let listing = {
                let _timer = Timer::start(Op::List);
                self.inner
                    .list_with_delimiter(Some(&Path::from(root)))
                    .await?
            };
            for prefix in &listing.common_prefixes {
                match prefix.filename().map(Workspace::parse) {
                    Some(Ok(ws)) => {
                        found.insert(ws);
                    }
                    _ => tracing::warn!(%prefix, "not a workspace name: skipped"),
                }
            }
        }
        Ok(found)
    }

    /// Whether the store answers: a HEAD of a key that never exists ("not found" is an answer),
    /// then a listing of a prefix that never holds anything. A listing is never "not found" on
    /// a bucket that exists, so a "not found" there is the bucket or container itself missing:
    /// a refusal an operator must fix, not an empty store.
    pub(super) async fn ready(&self) -> Result<()> {
        match self.inner.head(&Path::from(READYZ)).await {
            Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        match self
            .inner
            .list_with_delimiter(Some(&Path::from(READYZ)))
            .await
        {
            Ok(_) => Ok(()),
            Err(e @ object_store::Error::NotFound { .. }) => Err(StoreError::Refused(Arc::new(
                object_store::Error::Generic {
                    store: "store",
                    source: format!(
                        "the bucket or container of {} does not exist: {e}",
                        self.url
                    )
                    .into(),
                },
            ))),
            Err(e) => Err(e.into()),
        }
    }

    /// The store's own clock: an empty probe is written, its last-modified time read back,
    /// and the probe deleted. Every server sees the same clock here, whatever its own says.
    pub(super) async fn now(&self) -> Result<StoreTime> {
        let probe = Path::from(format!("clock/{}", probe_name()));
        let sent = std::time::Instant::now();
        self.inner.put(&probe, PutPayload::new()).await?;
        let answered = std::time::Instant::now();
        let head = self.inner.head(&probe).await;
        self.delete_path(&probe).await?;
        Ok(StoreTime {
            ms: head?.last_modified.timestamp_millis().max(0) as u64,
            sent,
            answered,
        })
    }

    // ---- writes ---------------------------------------------------------------------------

    /// Write a record's bytes as `expect` says, retrying transient faults.
    pub(super) async fn write(&self, key: &Key, bytes: Bytes, expect: Expect) -> Result<Version> {
        let mode = match expect {
            Expect::Absent => PutMode::Create,
            Expect::Any => PutMode::Overwrite,
            Expect::Version(v) => {
                if let Some(refused) = self.no_conditional_updates.get() {
                    return Err(refused.clone());
                }
                PutMode::Update(UpdateVersion {
                    e_tag: v.e_tag,
                    version: v.version,
                })
            }
        };
        let conditional = matches!(mode, PutMode::Update(_));
        let written = self.put(&key.path(), bytes, mode).await;
        if let (true, Err(e @ StoreError::NotSupported(_))) = (conditional, &written) {
            let _ = self.no_conditional_updates.set(e.clone());
        }
        written
    }

    /// Put an empty key (a marker, an owner marker, a dismissal): a fact, idempotent.
    pub(super) async fn mark(&self, key: &Key) -> Result<()> {
        self.put(&key.path(), Bytes::new(), PutMode::Overwrite)
            .await
            .map(drop)
    }

    /// Delete a key, retrying transient faults; a key already gone is fine.
    pub(super) async fn delete(&self, key: &Key) -> Result<()> {
        self.delete_path(&key.path()).await
    }

    /// Write `bytes` at `path` with `mode`, retrying transient faults with back-off.
    ///
    /// A create-only or conditional put that meets `AlreadyExists` / `Precondition` may be
    /// meeting its own earlier try, applied by the store after the answer was lost. That try
    /// may be Pickup's own retry, or one object_store made inside a single call (it resends a
    /// request whose connection dropped), so what looks like a first try is no proof: the key
    /// is always read back, and if it holds exactly these bytes the write is ours and
    /// succeeded. Otherwise the conflict is real and returned as it came.
    async fn put(&self, path: &Path, bytes: Bytes, mode: PutMode) -> Result<Version> {
        let mut delays = self.retry.delays();
        loop {
            let opts = PutOptions {
                mode: mode.clone(),
                ..Default::default()
            };
            let timer = Timer::start(Op::Put);
            let put = self
                .inner
                .put_opts(path, PutPayload::from_bytes(bytes.clone()), opts)
                .await;
            drop(timer);
            let err = match put {
                Ok(r) => {
                    return Ok(Version {
                        e_tag: r.e_tag,
                        version: r.version,
                    })
                }
                Err(
                    e @ (object_store::Error::AlreadyExists { .. }
                    | object_store::Error::Precondition { .. }),
                ) => match self.read_back(path, &bytes).await {
                    Ok(Some(v)) => return Ok(v),
                    Ok(None) => return Err(e.into()),
                    Err(read_err) => read_err,
                },
                Err(e) => e,
            };
            if !is_transient(&err) {
                return Err(err.into());
            }
            let Some(delay) = delays.next() else {
                return Err(err.into());
            };
            tracing::warn!(%path, error = %err, ?delay, "store write failed; retrying");
            tokio::time::sleep(delay).await;
        }
    }

    /// After an ambiguous write: the object's version if it holds exactly `bytes`.
    async fn read_back(&self, path: &Path, bytes: &[u8]) -> object_store::Result<Option<Version>> {
        match self.inner.get(path).await {
            Ok(got) => {
                let version = Version::of(&got);
                Ok((got.bytes().await?.as_ref() == bytes).then_some(version))
            }
            // Gone again (removed in between): not ours to claim.
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn delete_path(&self, path: &Path) -> Result<()> {
        let mut delays = self.retry.delays();
        loop {
            let timer = Timer::start(Op::Delete);
            let deleted = self.inner.delete(path).await;
            drop(timer);
            match deleted {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => return Ok(()),
                Err(e) if is_transient(&e) => match delays.next() {
                    Some(delay) => tokio::time::sleep(delay).await,
                    None => return Err(e.into()),
                },
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// A kind of store request, for the operators' numbers.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Op {
    List,
    Get,
    Head,
    Put,
    Delete,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::List => "list",
            Op::Get => "get",
            Op::Head => "head",
            Op::Put => "put",
            Op::Delete => "delete",
        }
    }
}

tokio::task_local! {
    /// Set while a live watcher reads its own in-memory copy of a workspace: those reads are
    /// not store requests, and counting them would hide what the store is really asked.
    static NOT_A_STORE: ();
}

/// Run `f` without counting its requests as the store's (a watcher's reads of its copy).
pub(crate) async fn uncounted<F: std::future::Future>(f: F) -> F::Output {
    NOT_A_STORE.scope((), f).await
}

pub(crate) fn counted() -> bool {
    NOT_A_STORE.try_with(|_| ()).is_err()
}

/// Counts one store request and records how long it took (when dropped). Without a metrics
/// recorder installed (no `PICKUP_METRICS_ADDR`) both are no-ops.
pub(crate) struct Timer(Op, Option<std::time::Instant>);

impl Timer {
    pub(crate) fn start(op: Op) -> Self {
        if !counted() {
            return Timer(op, None);
        }
        metrics::counter!(crate::metrics::STORE_REQUESTS, "op" => op.name()).increment(1);
        Timer(op, Some(std::time::Instant::now()))
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        if let Some(started) = self.1 {
            metrics::histogram!(crate::metrics::STORE_REQUEST_SECONDS, "op" => self.0.name())
                .record(started.elapsed().as_secs_f64());
        }
    }
}

/// The store's clock as one probe read it: `ms` since the epoch, stamped by the store some time
/// between `sent` and `answered` (this machine's monotonic clock) — only the write's round trip
/// brackets it, not the read-back and delete after it, which a loaded store makes long.
#[derive(Debug, Clone, Copy)]
pub(super) struct StoreTime {
    pub ms: u64,
    pub sent: std::time::Instant,
    pub answered: std::time::Instant,
}

/// A name no other server's probe has: this process's id and a counter.
fn probe_name() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let host = std::process::id();
    format!(
        "{host}-{}-{}",
        N.fetch_add(1, Ordering::Relaxed),
        chrono::Utc::now().timestamp_nanos_opt().unwrap_or(0)
    )
}
