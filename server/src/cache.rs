//! A short-lived read cache that concurrent requests share: one listing of a workspace and one
//! read of each record serve every request that arrives within `fresh_for` (250 ms by default).
//!
//! Why: a busy workspace's readers all ask the same question many times a second; on the local
//! file system a listing reads the whole directory. Guarantees kept:
//! - nothing is served older than `fresh_for`, so an item registered through any server shows
//!   within that (plus the request) — well inside the one second the widget promises;
//! - errors are never cached: requests already waiting on a failed fetch share the error, the
//!   next request fetches again;
//! - writes through this server drop what they make stale at once.

use crate::plan::Listing;
use futures::future::{BoxFuture, FutureExt, Shared};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Past this many entries, expired ones are dropped before inserting.
const MAX_ENTRIES: usize = 10_000;

type Fetch<T> = Shared<BoxFuture<'static, Result<T, String>>>;

struct Entry<T: Clone> {
    at: Instant,
    generation: u64,
    fetch: Fetch<T>,
}

struct Slots<T: Clone> {
    map: Mutex<HashMap<String, Entry<T>>>,
}

impl<T: Clone + Send + Sync + 'static> Slots<T> {
    fn new() -> Self {
        Slots {
            map: Mutex::new(HashMap::new()),
        }
    }

    async fn get(
        &self,
        key: &str,
        fresh_for: Duration,
        generations: &AtomicU64,
        fetch: impl FnOnce() -> BoxFuture<'static, Result<T, String>>,
    ) -> Result<T, String> {
        let (generation, pending) = {
            let mut map = self.map.lock().expect("cache lock");
            match map.get(key) {
                Some(e) if e.at.elapsed() < fresh_for => (e.generation, e.fetch.clone()),
                _ => {
                    if map.len() >= MAX_ENTRIES {
                        map.retain(|_, e| e.at.elapsed() < fresh_for);
                    }
                    let generation = generations.fetch_add(1, Ordering::Relaxed);
                    let pending = fetch().shared();
                    let entry = Entry {
                        at: Instant::now(),
                        generation,
                        fetch: pending.clone(),
                    };
                    map.insert(key.to_string(), entry);
                    (generation, pending)
                }
            }
        };
        let out = pending.await;
        if out.is_err() {
            let mut map = self.map.lock().expect("cache lock");
            if map.get(key).is_some_and(|e| e.generation == generation) {
                map.remove(key);
            }
        }
        out
    }

    fn remove_where(&self, pred: impl Fn(&str) -> bool) {
        self.map.lock().expect("cache lock").retain(|k, _| !pred(k));
    }
}

pub struct ReadCache {
    fresh_for: Duration,
    generations: AtomicU64,
    /// `{ws}`: the parsed, sorted markers (`{ws}/owners/{user}`: one owner's);
    /// `{ws}/dismissed/{user}`: a viewer's dismissals.
    listings: Slots<Arc<Listing>>,
    names: Slots<Arc<HashSet<String>>>,
    /// `{ws}/{id}`: a record's bytes.
    records: Slots<bytes::Bytes>,
}

/// How a record fetch says "no such record": like an error it is shared only by the requests
/// already waiting on that read and never kept, so a record written a moment later is seen at once.
pub const MISSING: &str = "\u{0}missing";

impl ReadCache {
    pub fn new(fresh_for: Duration) -> Self {
        ReadCache {
            fresh_for,
            generations: AtomicU64::new(0),
            listings: Slots::new(),
            names: Slots::new(),
            records: Slots::new(),
        }
    }

    /// A workspace's markers, listed (and parsed) at most once per `fresh_for`.
    pub async fn listing(
        &self,
        ws: &str,
        fetch: impl FnOnce() -> BoxFuture<'static, Result<Arc<Listing>, String>>,
    ) -> Result<Arc<Listing>, String> {
        self.listings
            .get(ws, self.fresh_for, &self.generations, fetch)
            .await
    }

    /// Names under another prefix of `ws` (`key` starts with `{ws}/`), e.g. dismissals.
    pub async fn names(
        &self,
        key: &str,
        fetch: impl FnOnce() -> BoxFuture<'static, Result<Arc<HashSet<String>>, String>>,
    ) -> Result<Arc<HashSet<String>>, String> {
        self.names
            .get(key, self.fresh_for, &self.generations, fetch)
            .await
    }

    /// A record's bytes (`Err(MISSING)` when it does not exist), read at most once per `fresh_for`.
    pub async fn record(
        &self,
        key: &str,
        fetch: impl FnOnce() -> BoxFuture<'static, Result<bytes::Bytes, String>>,
    ) -> Result<bytes::Bytes, String> {
        self.records
            .get(key, self.fresh_for, &self.generations, fetch)
            .await
    }

    /// A write to `ws` through this server: its listing and records are stale now.
    pub fn invalidate(&self, ws: &str) {
        let prefix = format!("{ws}/");
        self.listings
            .remove_where(|k| k == ws || k.starts_with(&prefix));
        self.names.remove_where(|k| k.starts_with(&prefix));
        self.records.remove_where(|k| k.starts_with(&prefix));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn counting(
        calls: &Arc<AtomicUsize>,
        ok: bool,
    ) -> BoxFuture<'static, Result<Arc<Listing>, String>> {
        let calls = calls.clone();
        async move {
            calls.fetch_add(1, Ordering::SeqCst);
            if ok {
                Ok(Arc::new(Listing::from_names(&["junk"])))
            } else {
                Err("down".to_string())
            }
        }
        .boxed()
    }

    #[tokio::test]
    async fn concurrent_and_fresh_requests_share_one_fetch() {
        let cache = ReadCache::new(Duration::from_secs(60));
        let calls = Arc::new(AtomicUsize::new(0));
        let (a, b) = tokio::join!(
            cache.listing("w", || counting(&calls, true)),
            cache.listing("w", || counting(&calls, true))
        );
        assert_eq!(a.unwrap(), b.unwrap());
        cache.listing("w", || counting(&calls, true)).await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        cache.invalidate("w");
        cache.listing("w", || counting(&calls, true)).await.unwrap();
        assert_eq!(
            calls.load(Ordering::SeqCst),
            2,
            "a write drops the cached listing"
        );
    }

    #[tokio::test]
    async fn errors_are_not_cached() {
        let cache = ReadCache::new(Duration::from_secs(60));
        let calls = Arc::new(AtomicUsize::new(0));
        assert!(cache
            .listing("w", || counting(&calls, false))
            .await
            .is_err());
        assert!(cache.listing("w", || counting(&calls, true)).await.is_ok());
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn nothing_is_served_older_than_fresh_for() {
        let cache = ReadCache::new(Duration::ZERO);
        let calls = Arc::new(AtomicUsize::new(0));
        cache.listing("w", || counting(&calls, true)).await.unwrap();
        cache.listing("w", || counting(&calls, true)).await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }
}
