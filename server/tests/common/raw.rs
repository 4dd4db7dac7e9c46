//! The object store under an index, spoken to directly: what the tests inspect and plant keys
//! through, by the layout DESIGN.md documents ("Keys in the store"), named here literally.
//! A change of layout must fail the tests that name it: that is why the paths are spelled out
//! here and not borrowed from the index's own mapping (`src/index/store/key.rs`).

use bytes::Bytes;
use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, PutResult};
use pickup::index::{Index, Key};
use std::sync::Arc;

/// Where DESIGN.md says `key` lives, under the store's root.
pub fn path(key: &Key) -> String {
    match key {
        Key::Marker(ws, id) => format!("ws/{ws}/markers/{id}"),
        Key::Record(ws, id) => format!("ws/{ws}/items/{id}.json"),
        Key::Dismissal(ws, user, id) => format!("ws/{ws}/dismissed/{user}/{id}"),
        Key::OwnerMarker(ws, user, id) => format!("ws/{ws}/owners/{user}/{id}"),
        Key::Pin(ws, user, id) => format!("ws/{ws}/pinned/{user}/{id}"),
        Key::Look(ws, user) => format!("looked/{ws}/{user}"),
    }
}

/// An object store, as `Index::through` hands it out: the one an index speaks to.
#[derive(Clone)]
pub struct Raw(pub Arc<dyn ObjectStore>);

impl Raw {
    /// The object store `index` speaks to now (through whatever layer it was given). The index
    /// itself is left as it was: the capture goes through a copy of it, since `through` also
    /// turns a cloud's paginated listing off.
    pub fn of(index: &Index) -> Raw {
        let mut raw = None;
        let _ = index.clone().through(|inner| {
            raw = Some(inner.clone());
            inner
        });
        Raw(raw.expect("through hands its layer the object store"))
    }

    /// Every object's path under the directory `dir`, in the order the store lists them.
    async fn list(&self, dir: &str) -> Vec<String> {
        let dir = Path::from(dir.trim_end_matches('/'));
        let metas: Vec<_> = self
            .0
            .list(Some(&dir))
            .try_collect()
            .await
            .unwrap_or_else(|e| panic!("listing {dir}/: {e}"));
        metas.into_iter().map(|m| m.location.to_string()).collect()
    }

    /// Every object's path under `dir`, sorted.
    pub async fn paths(&self, dir: &str) -> Vec<String> {
        let mut paths = self.list(dir).await;
        paths.sort();
        paths
    }

    /// The names under `dir` (each path without `dir/`), in the order the store lists them:
    /// `ws/acme/markers` gives ids, `ws/acme/dismissed` gives `{user}/{id}`.
    pub async fn listed(&self, dir: &str) -> Vec<String> {
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        self.list(dir)
            .await
            .into_iter()
            .map(|p| p.strip_prefix(&prefix).map(str::to_string).unwrap_or(p))
            .collect()
    }

    /// The names under `dir`, sorted.
    pub async fn names(&self, dir: &str) -> Vec<String> {
        let mut names = self.listed(dir).await;
        names.sort();
        names
    }

    /// Write `bytes` at `path`, whatever was there.
    pub async fn put(&self, path: &str, bytes: impl Into<Bytes>) {
        self.0
            .put(&Path::from(path), PutPayload::from_bytes(bytes.into()))
            .await
            .unwrap_or_else(|e| panic!("put {path}: {e}"));
    }

    /// A create-only put of `bytes` at `path`, as the store answers it.
    pub async fn create(
        &self,
        path: &str,
        bytes: impl Into<Bytes>,
    ) -> object_store::Result<PutResult> {
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        self.0
            .put_opts(
                &Path::from(path),
                PutPayload::from_bytes(bytes.into()),
                opts,
            )
            .await
    }

    /// The bytes at `path`, or `None` if there is no such object.
    pub async fn get(&self, path: &str) -> Option<Bytes> {
        match self.0.get(&Path::from(path)).await {
            Ok(got) => Some(got.bytes().await.unwrap()),
            Err(object_store::Error::NotFound { .. }) => None,
            Err(e) => panic!("get {path}: {e}"),
        }
    }

    /// Delete the object at `path` (one that is not there is fine).
    pub async fn delete(&self, path: &str) {
        match self.0.delete(&Path::from(path)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => panic!("delete {path}: {e}"),
        }
    }
}
