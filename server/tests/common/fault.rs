//! `FaultStore`: an `ObjectStore` wrapper (like object_store's own `PrefixStore`) that fails
//! chosen calls and records every call, so tests can prove what the code did and did not do.

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

#[derive(Debug, Default)]
struct Rules {
    /// (operation, key prefix): calls that match fail with a generic store error.
    failing: Mutex<Vec<(Op, String)>>,
    /// Every call, in order: (operation, key or prefix).
    calls: Mutex<Vec<(Op, String)>>,
}

impl Rules {
    fn enter(&self, op: Op, key: &str) -> Result<()> {
        self.calls.lock().unwrap().push((op, key.to_string()));
        let fails = self
            .failing
            .lock()
            .unwrap()
            .iter()
            .any(|(o, p)| *o == op && key.starts_with(p.as_str()));
        if fails {
            Err(injected(op, key))
        } else {
            Ok(())
        }
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

    pub fn heal(&self) {
        self.rules.failing.lock().unwrap().clear();
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
        self.inner.put_opts(location, payload, opts).await
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
                    inner.delete(&path).await.map(|()| path)
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
