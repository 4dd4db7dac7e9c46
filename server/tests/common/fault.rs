//! `FaultStore`: an `ObjectStore` wrapper (like object_store's own `PrefixStore`) that fails
//! chosen calls and records every call, so tests can prove what the code did and did not do.
//!
//! The crate's own unit tests include this file too (`src/service/tests.rs`, for the writes the
//! service runs to their end), so it uses nothing but object_store, futures and tokio.

use async_trait::async_trait;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Get,
    Put,
    List,
    Delete,
}

/// When a flaky call fails: before the store sees it, or after the store applied it (the
/// answer was lost on the way back: the case a retry must not count twice).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    Before,
    After,
}

#[derive(Debug)]
struct Flaky {
    op: Op,
    prefix: String,
    every: usize,
    when: When,
    seen: usize,
}

#[derive(Debug, Default)]
struct Rules {
    /// (operation, key prefix): calls that match fail with a generic store error.
    failing: Mutex<Vec<(Op, String)>>,
    /// Every `every`-th matching call fails, before or after it is applied.
    flaky: Mutex<Vec<Flaky>>,
    /// How many flaky failures were injected, before and after applying.
    injected: Mutex<(usize, usize)>,
    /// Every call, in order: (operation, key or prefix).
    calls: Mutex<Vec<(Op, String)>>,
    /// (operation, key prefix): matching calls wait at the door until the test lets them in.
    held: Mutex<Vec<(Op, String, Arc<Held>)>>,
}

/// A door calls wait at: `reached` says one arrived, `release` lets one through.
#[derive(Debug)]
pub struct Held {
    pub reached: tokio::sync::Notify,
    release: tokio::sync::Semaphore,
}

impl Default for Held {
    fn default() -> Self {
        Held {
            reached: tokio::sync::Notify::new(),
            release: tokio::sync::Semaphore::new(0),
        }
    }
}

impl Held {
    /// Let one waiting (or the next) call through.
    pub fn release(&self) {
        self.release.add_permits(1);
    }
}

/// Whether `key` starts with `pattern`, where a `*` in the pattern stands for one whole
/// path segment: `ws/*/markers/` is every workspace's markers.
fn under(key: &str, pattern: &str) -> bool {
    let mut rest = key;
    for (i, piece) in pattern.split('*').enumerate() {
        if i > 0 {
            match rest.find('/') {
                Some(end) => rest = &rest[end..],
                None => rest = "",
            }
        }
        match rest.strip_prefix(piece) {
            Some(after) => rest = after,
            None => return false,
        }
    }
    true
}

#[test]
fn a_star_is_one_segment() {
    assert!(under("ws/acme/markers/1", "ws/*/markers/"));
    assert!(under("ws/acme/markers/1", "ws/acme/markers/1"));
    assert!(!under("ws/acme/items/1.json", "ws/*/markers/"));
    assert!(!under("ws/acme/owners/markers/1", "ws/*/markers/"));
    assert!(under("ws/acme/items/1.json", "ws/"));
}

impl Rules {
    /// Wait at a door, if one is set for this call.
    async fn door(&self, op: Op, key: &str) {
        let held = self
            .held
            .lock()
            .unwrap()
            .iter()
            .find(|(o, p, _)| *o == op && under(key, p))
            .map(|(_, _, h)| h.clone());
        if let Some(h) = held {
            h.reached.notify_one();
            h.release.acquire().await.expect("never closed").forget();
        }
    }

    fn enter(&self, op: Op, key: &str) -> Result<()> {
        self.calls.lock().unwrap().push((op, key.to_string()));
        let fails = self
            .failing
            .lock()
            .unwrap()
            .iter()
            .any(|(o, p)| *o == op && under(key, p));
        if fails {
            Err(injected(op, key))
        } else {
            Ok(())
        }
    }

    /// Whether this call is one of the flaky ones, and when it fails. One verdict per call:
    /// the first rule that fires decides.
    fn flaky(&self, op: Op, key: &str) -> Option<When> {
        let mut hit = None;
        for f in self.flaky.lock().unwrap().iter_mut() {
            if f.op == op && under(key, &f.prefix) {
                f.seen += 1;
                if hit.is_none() && f.seen % f.every == 0 {
                    hit = Some(f.when);
                }
            }
        }
        if let Some(when) = hit {
            let mut n = self.injected.lock().unwrap();
            match when {
                When::Before => n.0 += 1,
                When::After => n.1 += 1,
            }
        }
        hit
    }
}

#[derive(Debug)]
pub struct FaultStore {
    inner: Arc<dyn ObjectStore>,
    rules: Arc<Rules>,
    /// How many entries all listings have yielded so far.
    pub listed: Arc<AtomicUsize>,
}

impl fmt::Display for FaultStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FaultStore({})", self.inner)
    }
}

fn injected(op: Op, key: &str) -> object_store::Error {
    object_store::Error::Generic {
        store: "FaultStore",
        source: format!("injected {op:?} failure at {key}").into(),
    }
}

impl FaultStore {
    pub fn new(inner: Arc<dyn ObjectStore>) -> Self {
        FaultStore {
            inner,
            rules: Arc::default(),
            listed: Arc::default(),
        }
    }

    pub fn fail(&self, op: Op, prefix: &str) {
        self.rules
            .failing
            .lock()
            .unwrap()
            .push((op, prefix.to_string()));
    }

    /// Clear the persistent failures only (flaky ones stay).
    pub fn fail_clear(&self) {
        self.rules.failing.lock().unwrap().clear();
    }

    /// Fail every `every`-th call of `op` under `prefix`, before or after applying it.
    pub fn flaky(&self, op: Op, prefix: &str, every: usize, when: When) {
        self.rules.flaky.lock().unwrap().push(Flaky {
            op,
            prefix: prefix.to_string(),
            every,
            when,
            seen: 0,
        });
    }

    /// Make calls of `op` under `prefix` wait until the test releases them.
    pub fn hold(&self, op: Op, prefix: &str) -> Arc<Held> {
        let held = Arc::new(Held::default());
        self.rules
            .held
            .lock()
            .unwrap()
            .push((op, prefix.to_string(), held.clone()));
        held
    }

    /// Flaky failures injected so far: (before applying, after applying).
    pub fn injected(&self) -> (usize, usize) {
        *self.rules.injected.lock().unwrap()
    }

    pub fn heal(&self) {
        self.rules.failing.lock().unwrap().clear();
        self.rules.flaky.lock().unwrap().clear();
    }

    pub fn forget_calls(&self) {
        self.rules.calls.lock().unwrap().clear();
    }

    pub fn calls_of(&self, op: Op) -> Vec<String> {
        self.rules
            .calls
            .lock()
            .unwrap()
            .iter()
            .filter(|(o, _)| *o == op)
            .map(|(_, k)| k.clone())
            .collect()
    }

    fn enter(&self, op: Op, key: &str) -> Result<()> {
        self.rules.enter(op, key)
    }
}

#[async_trait]
impl ObjectStore for FaultStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.enter(Op::Put, location.as_ref())?;
        self.rules.door(Op::Put, location.as_ref()).await;
        match self.rules.flaky(Op::Put, location.as_ref()) {
            None => self.inner.put_opts(location, payload, opts).await,
            Some(When::Before) => Err(injected(Op::Put, location.as_ref())),
            Some(When::After) => {
                self.inner.put_opts(location, payload, opts).await?;
                Err(injected(Op::Put, location.as_ref()))
            }
        }
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.enter(Op::Put, location.as_ref())?;
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        self.enter(Op::Get, location.as_ref())?;
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        // Decided per key: a failing key is reported failed and never reaches the store.
        let (inner, rules) = (self.inner.clone(), self.rules.clone());
        locations
            .then(move |p| {
                let (inner, rules) = (inner.clone(), rules.clone());
                async move {
                    let path = p?;
                    rules.enter(Op::Delete, path.as_ref())?;
                    match rules.flaky(Op::Delete, path.as_ref()) {
                        None => inner.delete(&path).await.map(|()| path),
                        Some(When::Before) => Err(injected(Op::Delete, path.as_ref())),
                        Some(When::After) => {
                            inner.delete(&path).await?;
                            Err(injected(Op::Delete, path.as_ref()))
                        }
                    }
                }
            })
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        let key = prefix.map(|p| p.to_string()).unwrap_or_default();
        if let Err(e) = self.enter(Op::List, &key) {
            return futures::stream::once(async move { Err(e) }).boxed();
        }
        let listed = self.listed.clone();
        self.inner
            .list(prefix)
            .inspect(move |_| {
                listed.fetch_add(1, Ordering::SeqCst);
            })
            .boxed()
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.enter(Op::List, &prefix.map(|p| p.to_string()).unwrap_or_default())?;
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.enter(Op::Put, to.as_ref())?;
        self.inner.copy_opts(from, to, options).await
    }
}
