//! A short-lived read cache in front of the store, with the store's read methods: one listing
//! of a scope and one read of each record serve every request that arrives within `fresh_for`
//! (250 ms by default).
//!
//! Why: a busy workspace's readers all ask the same question many times a second; on the local
//! file system a listing reads the whole directory. Guarantees kept:
//! - nothing is served from a load that began `fresh_for` or more before the request did, so an
//!   item registered through any server reaches every request that starts `fresh_for` after
//!   its registration was answered, well inside the one second the widget promises. Time is
//!   cut into windows of `fresh_for`, and a request shares only loads begun in its own window:
//!   a TTL from a load's end would serve a slow load's answer for `fresh_for` longer, and a
//!   request joining a load in flight would take an answer begun any time before it. The
//!   price: a listing slower than `fresh_for` is not shared across windows, so a slow store
//!   sees up to one load in flight per window of it, where a TTL saw one in all;
//! - concurrent requests for the same thing share one load (moka's `try_get_with`);
//! - errors are never cached: requests already waiting on a failed load share its error, the
//!   next request loads again;
//! - a write through this server makes everything cached for its workspace stale at once: the
//!   workspace's generation is part of every key, and a write moves it on, so a load that
//!   started before the write is never handed to a request that starts after it.
//!
//! Pages too: the same question (the same listing, cap, cursor and dismissals) asked in the
//! same window and generation is answered with the page computed first, since computing it
//! again from the same cached listing and records would give the same page. That computation
//! (planning a workspace's whole listing, judging each record) was most of a cached read's
//! CPU (BENCHMARKS.md, section 3).

use crate::index::marker_index::PageRead;
use crate::index::store::Result;
use crate::index::Workspace;
use crate::index::{Found, ItemId, Key, Scope, Store, Stored};
use moka::future::Cache;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// The most listings, and separately records, kept at once.
const MAX_ENTRIES: u64 = 10_000;

pub(crate) struct ReadCache {
    store: Store,
    lists: Cache<(Scope, Stamp), Arc<Found>>,
    records: Cache<(Key, Stamp), Option<Stored>>,
    pages: Cache<(PageAsk, Stamp), Arc<PageRead>>,
    generations: Mutex<HashMap<Workspace, u64>>,
    windows: Windows,
}

/// A page's question: whose listing (the workspace's markers, or one owner's), how many
/// cards, after which id, less which dismissed items. Viewers who ask the same share a page.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct PageAsk {
    pub source: Scope,
    pub cap: Option<u32>,
    pub before: Option<ItemId>,
    /// Sorted.
    pub dismissed: Vec<ItemId>,
}

/// What a load is shared under, beside what it reads: the workspace's generation (moved on by
/// each write through this server) and the window of `fresh_for` it began in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Stamp {
    generation: u64,
    window: u128,
}

/// Time cut into windows of `fresh_for`, counted from `born` (tokio's clock, so tests can
/// move it).
#[derive(Debug, Clone, Copy)]
struct Windows {
    born: Instant,
    fresh_for: Duration,
}

impl Windows {
    fn now(&self) -> u128 {
        self.born.elapsed().as_nanos() / self.fresh_for.as_nanos().max(1)
    }

    /// How long until `window` is over.
    fn left_in(&self, window: u128) -> Duration {
        let end = self.fresh_for.as_nanos().saturating_mul(window + 1);
        let left = end.saturating_sub(self.born.elapsed().as_nanos());
        Duration::from_nanos(u64::try_from(left).unwrap_or(u64::MAX))
    }
}

/// An entry is dropped when its window is over: no request can look it up after that.
impl<K, V> moka::Expiry<(K, Stamp), V> for Windows {
    fn expire_after_create(
        &self,
        key: &(K, Stamp),
        _: &V,
        _: std::time::Instant,
    ) -> Option<Duration> {
        Some(self.left_in(key.1.window))
    }
}

impl ReadCache {
    pub(crate) fn new(store: Store, fresh_for: Duration) -> Self {
        let windows = Windows {
            born: Instant::now(),
            fresh_for,
        };
        ReadCache {
            store,
            lists: Cache::builder()
                .max_capacity(MAX_ENTRIES)
                .expire_after(windows)
                .build(),
            records: Cache::builder()
                .max_capacity(MAX_ENTRIES)
                .expire_after(windows)
                .build(),
            pages: Cache::builder()
                .max_capacity(MAX_ENTRIES)
                .expire_after(windows)
                .build(),
            generations: Mutex::default(),
            windows,
        }
    }

    fn stamp(&self, ws: &Workspace) -> Stamp {
        let generations = self.generations.lock().expect("cache lock");
        Stamp {
            generation: generations.get(ws).copied().unwrap_or(0),
            window: self.windows.now(),
        }
    }

    /// [`Store::list`], shared.
    pub(crate) async fn list(&self, scope: &Scope) -> Result<Arc<Found>> {
        let key = (scope.clone(), self.stamp(scope.ws()));
        let entry = self
            .lists
            .entry(key)
            .or_try_insert_with(async { self.store.list(scope).await.map(Arc::new) })
            .await
            .map_err(|e| (*e).clone())?;
        count("list", entry.is_fresh());
        Ok(entry.into_value())
    }

    /// [`Store::read`], shared.
    pub(crate) async fn read(&self, key: &Key) -> Result<Option<Stored>> {
        let slot = (key.clone(), self.stamp(key.ws()));
        let entry = self
            .records
            .entry(slot)
            .or_try_insert_with(self.store.read(key))
            .await
            .map_err(|e| (*e).clone())?;
        count("record", entry.is_fresh());
        Ok(entry.into_value())
    }

    /// The page computed for `ask` in this window, if one was (or is being computed: requests
    /// that miss at once share one computation); else `compute`'s, kept for the rest of the
    /// window. An error is shared only with the requests already waiting on it, never kept.
    /// The second value is true when this call computed the page: only that caller applies
    /// its prune.
    pub(crate) async fn page(
        &self,
        ask: PageAsk,
        compute: impl std::future::Future<Output = crate::index::Result<PageRead>>,
    ) -> crate::index::Result<(Arc<PageRead>, bool)> {
        let stamp = self.stamp(ask.source.ws());
        let entry = self
            .pages
            .entry((ask, stamp))
            .or_try_insert_with(async { compute.await.map(Arc::new) })
            .await
            .map_err(|e| (*e).clone())?;
        count("page", entry.is_fresh());
        let computed = entry.is_fresh();
        Ok((entry.into_value(), computed))
    }

    /// A write to `ws` through this server: what is cached for it is stale now.
    pub(crate) fn invalidate(&self, ws: &Workspace) {
        *self
            .generations
            .lock()
            .expect("cache lock")
            .entry(ws.clone())
            .or_default() += 1;
    }
}

/// A lookup is a miss when this call loaded it; one served from the cache, or from a load another
/// request had already started, is a hit (it made no store request of its own). A failed load
/// is neither: the store's own error counts are in the store's metrics.
fn count(cache: &'static str, loaded_here: bool) {
    let result = if loaded_here { "miss" } else { "hit" };
    metrics::counter!(crate::metrics::CACHE_LOOKUPS, "cache" => cache, "result" => result)
        .increment(1);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::ItemId;
    use crate::index::SubKey;
    use object_store::memory::InMemory;
    use object_store::path::Path;
    use object_store::{
        GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
        PutMultipartOptions, PutOptions, PutPayload, PutResult,
    };
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts listings, and fails them while `down` is set; while `held` is set, a listing
    /// waits for `gate` before it answers.
    #[derive(Debug, Default)]
    struct Counted {
        inner: InMemory,
        lists: AtomicUsize,
        down: std::sync::atomic::AtomicBool,
        held: std::sync::atomic::AtomicBool,
        gate: Arc<tokio::sync::Notify>,
    }

    impl std::fmt::Display for Counted {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "Counted")
        }
    }

    #[async_trait::async_trait]
    impl ObjectStore for Counted {
        async fn put_opts(
            &self,
            location: &Path,
            payload: PutPayload,
            opts: PutOptions,
        ) -> object_store::Result<PutResult> {
            self.inner.put_opts(location, payload, opts).await
        }
        async fn put_multipart_opts(
            &self,
            location: &Path,
            opts: PutMultipartOptions,
        ) -> object_store::Result<Box<dyn MultipartUpload>> {
            self.inner.put_multipart_opts(location, opts).await
        }
        async fn get_opts(
            &self,
            location: &Path,
            options: GetOptions,
        ) -> object_store::Result<GetResult> {
            self.inner.get_opts(location, options).await
        }
        fn delete_stream(
            &self,
            locations: futures::stream::BoxStream<'static, object_store::Result<Path>>,
        ) -> futures::stream::BoxStream<'static, object_store::Result<Path>> {
            self.inner.delete_stream(locations)
        }
        fn list(
            &self,
            prefix: Option<&Path>,
        ) -> futures::stream::BoxStream<'static, object_store::Result<ObjectMeta>> {
            self.lists.fetch_add(1, Ordering::SeqCst);
            if self.down.load(Ordering::SeqCst) {
                let e = object_store::Error::Generic {
                    store: "test",
                    source: "down".into(),
                };
                return Box::pin(futures::stream::once(async { Err(e) }));
            }
            let listing = self.inner.list(prefix);
            if !self.held.load(Ordering::SeqCst) {
                return listing;
            }
            let gate = self.gate.clone();
            Box::pin(futures::StreamExt::flatten(futures::stream::once(
                async move {
                    gate.notified().await;
                    listing
                },
            )))
        }
        async fn list_with_delimiter(
            &self,
            prefix: Option<&Path>,
        ) -> object_store::Result<ListResult> {
            self.inner.list_with_delimiter(prefix).await
        }
        async fn copy_opts(
            &self,
            from: &Path,
            to: &Path,
            options: object_store::CopyOptions,
        ) -> object_store::Result<()> {
            self.inner.copy_opts(from, to, options).await
        }
    }

    fn setup(fresh_for: Duration) -> (Arc<Counted>, ReadCache, Scope, Store) {
        let counted = Arc::new(Counted::default());
        let store = Store::wrap(counted.clone(), crate::index::ListOrder::Sorted, "test://");
        let scope = Scope::Markers(Workspace::parse("w").unwrap());
        (
            counted,
            ReadCache::new(store.clone(), fresh_for),
            scope,
            store,
        )
    }

    fn marker(n: u64) -> Key {
        let id = ItemId::new(1_700_000_000_000 + n, SubKey::parse("k").unwrap()).unwrap();
        Key::Marker(Workspace::parse("w").unwrap(), id)
    }

    #[tokio::test]
    async fn concurrent_and_fresh_requests_share_one_load_and_a_write_drops_it() {
        let (counted, cache, scope, store) = setup(Duration::from_secs(60));
        let (a, b) = tokio::join!(cache.list(&scope), cache.list(&scope));
        assert_eq!(a.unwrap(), b.unwrap());
        cache.list(&scope).await.unwrap();
        assert_eq!(counted.lists.load(Ordering::SeqCst), 1);
        store.mark(&marker(1)).await.unwrap();
        assert!(
            cache.list(&scope).await.unwrap().keys.is_empty(),
            "still cached"
        );
        cache.invalidate(scope.ws());
        assert_eq!(cache.list(&scope).await.unwrap().keys, vec![marker(1)]);
        assert_eq!(
            counted.lists.load(Ordering::SeqCst),
            2,
            "a write drops the cached listing"
        );
    }

    #[tokio::test]
    async fn errors_are_shared_typed_but_never_kept() {
        let (counted, cache, scope, _) = setup(Duration::from_secs(60));
        counted.down.store(true, Ordering::SeqCst);
        let (a, b) = tokio::join!(cache.list(&scope), cache.list(&scope));
        assert!(
            matches!(a, Err(crate::index::StoreError::Unavailable(_))),
            "{a:?}"
        );
        assert!(b.is_err());
        counted.down.store(false, Ordering::SeqCst);
        assert!(cache.list(&scope).await.is_ok());
        assert!(counted.lists.load(Ordering::SeqCst) >= 2);
    }

    /// A slow load is not shared with a request that starts a window after it began: the
    /// answer would be older than `fresh_for` for that request.
    #[tokio::test(start_paused = true)]
    async fn a_request_never_joins_a_load_begun_fresh_for_before_it() {
        let (counted, cache, scope, _) = setup(Duration::from_millis(250));
        counted.held.store(true, Ordering::SeqCst);
        let (first, second) = tokio::join!(cache.list(&scope), async {
            while counted.lists.load(Ordering::SeqCst) == 0 {
                tokio::task::yield_now().await;
            }
            tokio::time::advance(Duration::from_millis(250)).await;
            counted.held.store(false, Ordering::SeqCst);
            counted.gate.notify_one();
            cache.list(&scope).await
        });
        first.unwrap();
        second.unwrap();
        assert_eq!(
            counted.lists.load(Ordering::SeqCst),
            2,
            "the later request was handed the load begun a window before it"
        );
    }

    /// An entry lives until its window ends, and one inserted after that is gone at once.
    #[tokio::test(start_paused = true)]
    async fn an_entry_lives_to_the_end_of_its_window() {
        let windows = Windows {
            born: Instant::now(),
            fresh_for: Duration::from_millis(250),
        };
        tokio::time::advance(Duration::from_millis(100)).await;
        assert_eq!(windows.now(), 0);
        assert_eq!(windows.left_in(0), Duration::from_millis(150));
        tokio::time::advance(Duration::from_millis(200)).await;
        assert_eq!(windows.now(), 1);
        assert_eq!(
            windows.left_in(0),
            Duration::ZERO,
            "a slow load's window is over"
        );
        assert_eq!(windows.left_in(1), Duration::from_millis(200));
    }

    #[tokio::test]
    async fn nothing_is_served_older_than_fresh_for() {
        let (counted, cache, scope, _) = setup(Duration::from_millis(1));
        cache.list(&scope).await.unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        cache.list(&scope).await.unwrap();
        assert_eq!(counted.lists.load(Ordering::SeqCst), 2);
    }

    fn page_read() -> PageRead {
        PageRead {
            page: app::contract::RecentPage {
                cards: vec![],
                more: false,
                partial: false,
                generated_at: "t".into(),
            },
            prune: Default::default(),
            listed: 0,
            unread: vec![],
        }
    }

    #[tokio::test]
    async fn a_page_is_computed_once_per_question_window_and_generation() {
        let (_, cache, scope, _) = setup(Duration::from_secs(60));
        let computed = std::sync::atomic::AtomicUsize::new(0);
        let compute = || async {
            computed.fetch_add(1, Ordering::SeqCst);
            Ok(page_read())
        };
        let ask = |dismissed: Vec<ItemId>| PageAsk {
            source: scope.clone(),
            cap: None,
            before: None,
            dismissed,
        };
        let (a, b) = tokio::join!(
            cache.page(ask(vec![]), compute()),
            cache.page(ask(vec![]), compute())
        );
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!(computed.load(Ordering::SeqCst), 1, "shared while computed");
        assert_ne!(
            a.1, b.1,
            "exactly one of them computed it (and applies its prune)"
        );
        assert!(!cache.page(ask(vec![]), compute()).await.unwrap().1);
        let dismissed = marker(1).id().unwrap().clone();
        assert!(
            cache.page(ask(vec![dismissed]), compute()).await.unwrap().1,
            "other dismissals, another page"
        );
        cache.invalidate(scope.ws());
        assert!(
            cache.page(ask(vec![]), compute()).await.unwrap().1,
            "a write drops it"
        );
        assert_eq!(computed.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn a_page_that_failed_is_computed_again() {
        let (_, cache, scope, _) = setup(Duration::from_secs(60));
        let ask = PageAsk {
            source: scope.clone(),
            cap: None,
            before: None,
            dismissed: vec![],
        };
        let failed = cache
            .page(ask.clone(), async {
                Err(crate::index::IndexError::NotFound)
            })
            .await;
        assert!(failed.is_err());
        assert!(cache.page(ask, async { Ok(page_read()) }).await.unwrap().1);
    }
}
