//! A short-lived read cache in front of the store, with the store's read methods: one listing
//! of a scope and one read of each record serve every request that arrives within `fresh_for`
//! (250 ms by default).
//!
//! Why: a busy workspace's readers all ask the same question many times a second; on the local
//! file system a listing reads the whole directory. Guarantees kept:
//! - nothing is served from a load that began `fresh_for` or more before the request did, so an
//!   item registered through any server reaches every request that starts `fresh_for` after
//!   its registration was answered, well inside the one second the widget promises. Time is
//!   cut into windows of three quarters of `fresh_for`, and a load is keyed by the window it
//!   began in: a TTL from a load's end would serve a slow load's answer for `fresh_for` longer,
//!   and a request joining a load in flight would take an answer begun any time before it. The
//!   price: a listing slower than a window is not shared across windows, so a slow store sees
//!   up to one load in flight per window of it, where a TTL saw one in all;
//! - a page, and the viewer's dismissals a page is asked with, are answered from the window
//!   before while it is younger than `fresh_for` (the first quarter of `fresh_for` of each
//!   window), and this window's are loaded behind it. Without that, every request arriving as
//!   a window turned waited for the workspace's whole listing and its page (about 10 ms for
//!   1,000 markers on the file store): that wait was the `recent` route's p99 (BENCHMARKS.md,
//!   section 3). The price: a workspace read all the time is listed once per window, four
//!   times per three `fresh_for`. Listings and records read *for* a page are never taken from
//!   the window before: a page's answer is as old as the oldest load it was made from;
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
use crate::index::store::{Found, Scope, Store, Stored};
use crate::index::Workspace;
use crate::index::{ItemId, Key};
use moka::future::Cache;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// The most entries each of the cache's parts (listings, records, pages) keeps at once.
const MAX_ENTRIES: u64 = 10_000;

pub(crate) struct ReadCache {
    store: Store,
    lists: ShelfOrBefore<Scope, Arc<Found>>,
    records: Shelf<Key, Option<Stored>>,
    pages: ShelfOrBefore<PageAsk, Arc<CachedPage>>,
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
    /// Sorted.
    pub pinned: Vec<ItemId>,
}

/// A page as kept: shared by every request that asks its question in its window.
#[derive(Debug)]
pub(crate) struct CachedPage {
    pub read: PageRead,
    pruned: AtomicBool,
}

impl CachedPage {
    /// True for the one request that applies this page's prune: the markers it found dead are
    /// deleted once, by the first request handed the page (a page loaded behind an older one
    /// was computed for no request).
    pub(crate) fn take_prune(&self) -> bool {
        !self.pruned.swap(true, Ordering::AcqRel)
    }
}

/// What a load is shared under, beside what it reads: the workspace's generation (moved on by
/// each write through this server) and the window it began in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Stamp {
    generation: u64,
    window: u128,
}

/// Time cut into windows of three quarters of `fresh_for`, counted from `born` (tokio's
/// clock, so tests can move it). A window's loads may serve for `fresh_for` from the
/// window's start: their own window, then the first quarter of `fresh_for` of the next.
#[derive(Debug, Clone, Copy)]
struct Windows {
    born: Instant,
    fresh_for: Duration,
}

impl Windows {
    fn length(&self) -> u128 {
        (self.fresh_for.as_nanos() * 3 / 4).max(1)
    }

    fn now(&self) -> u128 {
        self.born.elapsed().as_nanos() / self.length()
    }

    /// How long `window`'s loads may still serve: until `fresh_for` after the window began.
    fn left_in(&self, window: u128) -> Duration {
        let end = self
            .length()
            .saturating_mul(window)
            .saturating_add(self.fresh_for.as_nanos());
        let left = end.saturating_sub(self.born.elapsed().as_nanos());
        Duration::from_nanos(u64::try_from(left).unwrap_or(u64::MAX))
    }
}

/// An entry is dropped when it may serve no more: no request can look it up after that.
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

/// A cache whose entries are dropped once their window may serve no more.
fn per_window<K, V>(windows: Windows) -> Cache<(K, Stamp), V>
where
    K: std::hash::Hash + Eq + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    Cache::builder()
        .max_capacity(MAX_ENTRIES)
        .expire_after(windows)
        .build()
}

/// One kind of value kept per window and generation.
struct Shelf<K, V> {
    values: Cache<(K, Stamp), V>,
}

/// A [`Shelf`] whose values may also be answered from the window before (pages, and the
/// listings they are asked with), and which windows' loads were started behind such an answer
/// (once each). What a page is made of is kept on a plain `Shelf`, which cannot.
struct ShelfOrBefore<K, V> {
    shelf: Shelf<K, V>,
    behind: Cache<(K, Stamp), ()>,
    windows: Windows,
}

impl<K, V> Shelf<K, V>
where
    K: std::hash::Hash + Eq + Clone + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    fn new(windows: Windows) -> Self {
        Shelf {
            values: per_window(windows),
        }
    }

    /// The value loaded in `stamp`'s window, or being loaded (requests that miss at once share
    /// one load); else `load`'s, kept for the window. True when this call loaded it.
    async fn get<E: Send + Sync + 'static>(
        &self,
        what: K,
        stamp: Stamp,
        load: impl Future<Output = std::result::Result<V, E>>,
    ) -> std::result::Result<(V, bool), Arc<E>> {
        let entry = self
            .values
            .entry((what, stamp))
            .or_try_insert_with(load)
            .await?;
        Ok((entry.value().clone(), entry.is_fresh()))
    }
}

impl<K, V> ShelfOrBefore<K, V>
where
    K: std::hash::Hash + Eq + Clone + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    fn new(windows: Windows) -> Self {
        ShelfOrBefore {
            shelf: Shelf::new(windows),
            behind: per_window(windows),
            windows,
        }
    }

    /// As [`Shelf::get`], but while the window before's value may still serve (`windows`) and
    /// this window's is not loaded, that one is the answer, and this window's is loaded behind
    /// it, by one task. `load` makes the load's future, only when one is needed.
    async fn get_or_before<E, F>(
        &self,
        what: K,
        stamp: Stamp,
        load: impl FnOnce() -> F,
    ) -> std::result::Result<(V, bool), Arc<E>>
    where
        E: std::fmt::Display + Send + Sync + 'static,
        F: Future<Output = std::result::Result<V, E>> + Send + 'static,
    {
        let key = (what, stamp);
        if let Some(value) = self.shelf.values.get(&key).await {
            return Ok((value, false));
        }
        let older = match stamp.window.checked_sub(1) {
            Some(before) if !self.windows.left_in(before).is_zero() => {
                self.shelf
                    .values
                    .get(&(
                        key.0.clone(),
                        Stamp {
                            window: before,
                            ..stamp
                        },
                    ))
                    .await
            }
            _ => None,
        };
        let Some(value) = older else {
            return self.shelf.get(key.0, stamp, load()).await;
        };
        if self
            .behind
            .entry(key.clone())
            .or_insert(())
            .await
            .is_fresh()
        {
            let (values, load) = (self.shelf.values.clone(), load());
            tokio::spawn(async move {
                // Its error is no request's (the next request loads again), but is not hidden.
                if let Err(e) = values.entry(key).or_try_insert_with(load).await {
                    tracing::warn!(error = %e, "read cache: a load behind an older answer failed");
                }
            });
        }
        Ok((value, false))
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
            lists: ShelfOrBefore::new(windows),
            records: Shelf::new(windows),
            pages: ShelfOrBefore::new(windows),
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

    /// [`Store::list`], shared: for what a page is made of.
    pub(crate) async fn list(&self, scope: &Scope) -> Result<Arc<Found>> {
        self.listing(scope, false).await
    }

    /// [`Store::list`], shared, and answered from the window before while it may serve (see
    /// the module's guarantees): for what a page is asked with, never for what it is made of.
    pub(crate) async fn list_or_before(&self, scope: &Scope) -> Result<Arc<Found>> {
        self.listing(scope, true).await
    }

    async fn listing(&self, scope: &Scope, or_before: bool) -> Result<Arc<Found>> {
        let stamp = self.stamp(scope.ws());
        let load = || {
            let (store, scope) = (self.store.clone(), scope.clone());
            async move { store.list(&scope).await.map(Arc::new) }
        };
        let listed = if or_before {
            self.lists.get_or_before(scope.clone(), stamp, load).await
        } else {
            self.lists.shelf.get(scope.clone(), stamp, load()).await
        };
        let (found, loaded) = listed.map_err(|e| (*e).clone())?;
        count("list", loaded);
        Ok(found)
    }

    /// [`Store::read`], shared.
    pub(crate) async fn read(&self, key: &Key) -> Result<Option<Stored>> {
        let stamp = self.stamp(key.ws());
        let (stored, loaded) = self
            .records
            .get(key.clone(), stamp, self.store.read(key))
            .await
            .map_err(|e| (*e).clone())?;
        count("record", loaded);
        Ok(stored)
    }

    /// The page computed for `ask` in this window, if one was (or is being computed: requests
    /// that miss at once share one computation); else, while it may serve, the window before's,
    /// with this window's computed behind it; else `compute`'s, kept for the window. An error
    /// is shared only with the requests already waiting on it, never kept. `compute` makes the
    /// computation's future, only when one is needed.
    pub(crate) async fn page<F>(
        &self,
        ask: PageAsk,
        compute: impl FnOnce() -> F,
    ) -> crate::index::Result<Arc<CachedPage>>
    where
        F: Future<Output = crate::index::Result<PageRead>> + Send + 'static,
    {
        let stamp = self.stamp(ask.source.ws());
        let compute = || {
            let computing = compute();
            async move {
                computing.await.map(|read| {
                    Arc::new(CachedPage {
                        read,
                        pruned: AtomicBool::new(false),
                    })
                })
            }
        };
        let (page, computed) = self
            .pages
            .get_or_before(ask, stamp, compute)
            .await
            .map_err(|e| (*e).clone())?;
        count("page", computed);
        Ok(page)
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
        let store = Store::wrap(
            counted.clone(),
            crate::index::store::ListOrder::Sorted,
            "test://",
        );
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
            matches!(a, Err(crate::index::store::StoreError::Unavailable(_))),
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

    /// A window is three quarters of `fresh_for`; its entries live until `fresh_for` after it
    /// began, and one inserted after that is gone at once.
    #[tokio::test(start_paused = true)]
    async fn an_entry_lives_until_fresh_for_after_its_window_began() {
        let windows = Windows {
            born: Instant::now(),
            fresh_for: Duration::from_millis(400),
        };
        tokio::time::advance(Duration::from_millis(100)).await;
        assert_eq!(windows.now(), 0);
        assert_eq!(windows.left_in(0), Duration::from_millis(300));
        tokio::time::advance(Duration::from_millis(250)).await;
        assert_eq!(windows.now(), 1, "windows of 300 ms");
        assert_eq!(windows.left_in(0), Duration::from_millis(50));
        tokio::time::advance(Duration::from_millis(100)).await;
        assert_eq!(
            windows.left_in(0),
            Duration::ZERO,
            "a slow load's window is over"
        );
        assert_eq!(windows.left_in(1), Duration::from_millis(250));
    }

    #[tokio::test]
    async fn nothing_is_served_older_than_fresh_for() {
        let (counted, cache, scope, _) = setup(Duration::from_millis(1));
        cache.list(&scope).await.unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        cache.list(&scope).await.unwrap();
        assert_eq!(counted.lists.load(Ordering::SeqCst), 2);
    }

    /// An empty page, `generated_at` saying which run made it.
    fn page_read(run: &str) -> PageRead {
        PageRead {
            page: crate::index::SharedPage::new(app::contract::RecentPage {
                cards: vec![],
                more: false,
                partial: false,
                generated_at: run.into(),
            }),
            prune: Default::default(),
            listed: 0,
            unread: vec![],
        }
    }

    /// A page question and a compute that counts its runs and says which run made the page
    /// (in `generated_at`); while `held`, a run waits for `gate`.
    struct Computations {
        runs: Arc<AtomicUsize>,
        held: Arc<std::sync::atomic::AtomicBool>,
        gate: Arc<tokio::sync::Notify>,
    }

    impl Computations {
        fn new() -> Self {
            Computations {
                runs: Arc::default(),
                held: Arc::default(),
                gate: Arc::default(),
            }
        }

        fn compute(&self) -> impl Future<Output = crate::index::Result<PageRead>> + Send + 'static {
            let (runs, held, gate) = (self.runs.clone(), self.held.clone(), self.gate.clone());
            async move {
                let run = runs.fetch_add(1, Ordering::SeqCst) + 1;
                if held.load(Ordering::SeqCst) {
                    gate.notified().await;
                }
                Ok(page_read(&run.to_string()))
            }
        }

        fn runs(&self) -> usize {
            self.runs.load(Ordering::SeqCst)
        }
    }

    fn ask(scope: &Scope, dismissed: Vec<ItemId>) -> PageAsk {
        PageAsk {
            source: scope.clone(),
            cap: None,
            before: None,
            dismissed,
            pinned: Vec::new(),
        }
    }

    fn run_of(page: &CachedPage) -> &str {
        &page.read.page.generated_at
    }

    #[tokio::test]
    async fn a_page_is_computed_once_per_question_window_and_generation() {
        let (_, cache, scope, _) = setup(Duration::from_secs(60));
        let pages = Computations::new();
        let (a, b) = tokio::join!(
            cache.page(ask(&scope, vec![]), || pages.compute()),
            cache.page(ask(&scope, vec![]), || pages.compute())
        );
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!(pages.runs(), 1, "shared while computed");
        assert_ne!(
            a.take_prune(),
            b.take_prune(),
            "exactly one of them applies its prune"
        );
        cache
            .page(ask(&scope, vec![]), || pages.compute())
            .await
            .unwrap();
        assert_eq!(pages.runs(), 1);
        let dismissed = marker(1).id().unwrap().clone();
        cache
            .page(ask(&scope, vec![dismissed]), || pages.compute())
            .await
            .unwrap();
        assert_eq!(pages.runs(), 2, "other dismissals, another page");
        cache.invalidate(scope.ws());
        cache
            .page(ask(&scope, vec![]), || pages.compute())
            .await
            .unwrap();
        assert_eq!(pages.runs(), 3, "a write drops it");
    }

    /// As a window turns, a request is answered at once with the page of the window before
    /// (younger than `fresh_for`), and this window's is computed behind it, once.
    #[tokio::test(start_paused = true)]
    async fn as_a_window_turns_the_page_before_answers_and_this_windows_is_computed_behind_it() {
        let (_, cache, scope, _) = setup(Duration::from_millis(400));
        let pages = Computations::new();
        let first = cache.page(ask(&scope, vec![]), || pages.compute()).await;
        assert_eq!(run_of(&first.unwrap()), "1");
        tokio::time::advance(Duration::from_millis(310)).await;
        pages.held.store(true, Ordering::SeqCst);
        for _ in 0..3 {
            // Polled once, not awaited: a request that waited for the held compute would hang
            // the test rather than fail it.
            let answer = futures::FutureExt::now_or_never(
                cache.page(ask(&scope, vec![]), || pages.compute()),
            )
            .expect("the window before's page answers without waiting for this window's");
            assert_eq!(
                run_of(&answer.unwrap()),
                "1",
                "the window before's, at once"
            );
        }
        while pages.runs() < 2 {
            tokio::task::yield_now().await;
        }
        pages.held.store(false, Ordering::SeqCst);
        pages.gate.notify_one();
        let mut answer = String::new();
        while answer != "2" {
            tokio::task::yield_now().await;
            let page = cache.page(ask(&scope, vec![]), || pages.compute()).await;
            answer = run_of(&page.unwrap()).to_string();
        }
        assert_eq!(
            pages.runs(),
            2,
            "computed behind it once, for every request"
        );
    }

    /// The window before answers only while it is younger than `fresh_for`, and never across a
    /// write.
    #[tokio::test(start_paused = true)]
    async fn the_page_before_never_answers_fresh_for_after_its_window_began_nor_after_a_write() {
        let (_, cache, scope, _) = setup(Duration::from_millis(400));
        let pages = Computations::new();
        cache
            .page(ask(&scope, vec![]), || pages.compute())
            .await
            .unwrap();
        tokio::time::advance(Duration::from_millis(410)).await;
        let late = cache.page(ask(&scope, vec![]), || pages.compute()).await;
        assert_eq!(run_of(&late.unwrap()), "2", "400 ms after its window began");
        tokio::time::advance(Duration::from_millis(200)).await;
        cache.invalidate(scope.ws());
        let written = cache.page(ask(&scope, vec![]), || pages.compute()).await;
        assert_eq!(run_of(&written.unwrap()), "3", "a write came between");
    }

    /// What a page is made of is never taken from the window before: the page would be older
    /// than its window says.
    #[tokio::test(start_paused = true)]
    async fn a_listing_for_a_page_is_never_the_window_befores() {
        let (counted, cache, scope, _) = setup(Duration::from_millis(400));
        cache.list(&scope).await.unwrap();
        tokio::time::advance(Duration::from_millis(310)).await;
        cache.list(&scope).await.unwrap();
        assert_eq!(counted.lists.load(Ordering::SeqCst), 2);
        tokio::time::advance(Duration::from_millis(300)).await;
        cache.list_or_before(&scope).await.unwrap();
        assert_eq!(
            counted.lists.load(Ordering::SeqCst),
            2,
            "a listing asked with is answered by the window before"
        );
    }

    #[tokio::test]
    async fn a_page_that_failed_is_computed_again() {
        let (_, cache, scope, _) = setup(Duration::from_secs(60));
        let failed = cache
            .page(ask(&scope, vec![]), || async {
                Err(crate::index::IndexError::NotFound)
            })
            .await;
        assert!(failed.is_err());
        let pages = Computations::new();
        cache
            .page(ask(&scope, vec![]), || pages.compute())
            .await
            .unwrap();
        assert_eq!(pages.runs(), 1);
    }
}
