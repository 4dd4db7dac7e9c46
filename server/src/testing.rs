//! What the crate's own tests share: a layer between an index and its store that fails reads on
//! demand, put in with `Index::through` (the integration tests have a fuller one of their own,
//! `server/tests/common/fault.rs`).

use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use std::sync::{Arc, Mutex};

/// Passes every request on to `inner`, but for the reads of keys under a prefix while one is
/// set ([`FailingReads::fail`]), which fail as a store that does not answer fails.
#[derive(Debug)]
pub(crate) struct FailingReads {
    inner: Arc<dyn ObjectStore>,
    under: Mutex<Option<String>>,
}

impl FailingReads {
    pub(crate) fn new(inner: Arc<dyn ObjectStore>) -> Self {
        FailingReads {
            inner,
            under: Mutex::new(None),
        }
    }

    /// Reads of keys under `prefix` fail from now on.
    pub(crate) fn fail(&self, prefix: &str) {
        *self.under.lock().unwrap() = Some(prefix.into());
    }

    /// Every read passes again.
    pub(crate) fn heal(&self) {
        *self.under.lock().unwrap() = None;
    }
}

impl std::fmt::Display for FailingReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FailingReads({})", self.inner)
    }
}

#[async_trait::async_trait]
impl ObjectStore for FailingReads {
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
        let failing = self.under.lock().unwrap().clone();
        if failing.is_some_and(|p| location.as_ref().starts_with(&p)) {
            return Err(object_store::Error::Generic {
                store: "test",
                source: "the store does not answer".into(),
            });
        }
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}
