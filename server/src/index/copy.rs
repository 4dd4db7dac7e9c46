//! A copy of one workspace in memory, and what the store tells such a copy. A live watcher
//! keeps one ([`MemoryIndex`]): it is written key by key, from the store's listing and from
//! facts, and read by the index's own read path, so a page read from it is the page the store
//! would give for the same keys. Only this module makes a store of memory for it; the watcher
//! names keys and bytes, never object_store.

use super::store::uncounted;
use crate::index::{Expect, Index, Key, PageRead, Result, Scope, Store, Version};
use crate::index::{UserId, Workspace};
use app::contract::Filter;
use bytes::Bytes;

/// An index on memory, written key by key: a live watcher's copy of one workspace. Its
/// requests are memory, never counted as the store's.
#[derive(Clone)]
pub struct MemoryIndex {
    index: Index,
}

impl Index {
    /// An empty index on memory, judging by this index's limits, cap and clock.
    pub fn empty_copy(&self) -> MemoryIndex {
        let store = Store::memory("memory://live-copy");
        MemoryIndex {
            index: Index::new(store, self.limits, self.default_cap, self.clock.clone()),
        }
    }

    /// Every key of `ws` with the version it was listed at (one listing, in key order): what a
    /// copy compares with what it holds, to read only what changed.
    pub async fn versions(&self, ws: &Workspace) -> Result<Vec<(Key, Version)>> {
        Ok(self
            .store
            .list_versions(&Scope::Workspace(ws.clone()))
            .await?)
    }

    /// A key's bytes as the store holds them, or `None` if it does not exist.
    pub async fn bytes(&self, key: &Key) -> Result<Option<Bytes>> {
        Ok(self.store.read(key).await?.map(|stored| stored.bytes))
    }
}

impl MemoryIndex {
    /// This viewer's first page, as [`Index::recent`] gives it from the keys held.
    pub async fn page(
        &self,
        ws: &Workspace,
        viewer: &UserId,
        filter: Filter,
        cap: u32,
    ) -> Result<PageRead> {
        uncounted(self.index.recent(ws, viewer, filter, Some(cap), None)).await
    }

    /// Hold `bytes` under `key`, whatever it held.
    pub async fn put(&self, key: &Key, bytes: Bytes) -> Result<()> {
        uncounted(self.index.store.write(key, bytes, Expect::Any)).await?;
        Ok(())
    }

    /// Hold an empty key (a marker, an owner marker, a dismissal).
    pub async fn mark(&self, key: &Key) -> Result<()> {
        Ok(uncounted(self.index.store.mark(key)).await?)
    }

    /// Hold `key` no more; a key not held is fine.
    pub async fn delete(&self, key: &Key) -> Result<()> {
        Ok(uncounted(self.index.store.delete(key)).await?)
    }

    /// Every key held of `ws`, with its version, in key order.
    pub async fn versions(&self, ws: &Workspace) -> Result<Vec<(Key, Version)>> {
        uncounted(self.index.versions(ws)).await
    }
}
