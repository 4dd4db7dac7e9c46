//! `Generations`: a store wrapper that compares versions the way GCS does, by the object's
//! generation and not its ETag (object_store's GCS backend refuses an update without a
//! `version`), and records every `UpdateVersion` it receives.

use async_trait::async_trait;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, PutMode,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, Result, UpdateVersion,
};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

#[derive(Debug)]
pub struct Generations {
    inner: Arc<dyn ObjectStore>,
    generation: Mutex<HashMap<String, u64>>,
    next: Mutex<u64>,
    /// Every `UpdateVersion` a conditional put carried.
    pub updates: Mutex<Vec<UpdateVersion>>,
}

impl fmt::Display for Generations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Generations({})", self.inner)
    }
}

impl Generations {
    pub fn new(inner: Arc<dyn ObjectStore>) -> Self {
        Generations {
            inner,
            generation: Mutex::default(),
            next: Mutex::new(1_700_000_000_000_000),
            updates: Mutex::default(),
        }
    }

    fn current(&self, path: &Path) -> Option<String> {
        self.generation
            .lock()
            .unwrap()
            .get(path.as_ref())
            .map(|g| g.to_string())
    }
}

#[async_trait]
impl ObjectStore for Generations {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        if let PutMode::Update(v) = &opts.mode {
            self.updates.lock().unwrap().push(v.clone());
            let Some(version) = &v.version else {
                return Err(object_store::Error::Generic {
                    store: "Generations",
                    source: "a conditional update needs the object's generation (version)".into(),
                });
            };
            if self.current(location).as_ref() != Some(version) {
                return Err(object_store::Error::Precondition {
                    path: location.to_string(),
                    source: "generation mismatch".into(),
                });
            }
        }
        let inner_opts = PutOptions {
            mode: match opts.mode {
                PutMode::Update(_) => PutMode::Overwrite,
                other => other,
            },
            ..opts
        };
        let mut res = self.inner.put_opts(location, payload, inner_opts).await?;
        let generation = {
            let mut next = self.next.lock().unwrap();
            *next += 1;
            *next
        };
        self.generation
            .lock()
            .unwrap()
            .insert(location.to_string(), generation);
        res.version = Some(generation.to_string());
        Ok(res)
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        let mut got = self.inner.get_opts(location, options).await?;
        got.meta.version = self.current(location);
        Ok(got)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: object_store::CopyOptions,
    ) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}
