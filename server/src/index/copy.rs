//! A copy of one workspace in memory, and what the store tells such a copy. A live watcher
//! keeps one ([`MemoryIndex`]): it is written key by key, from the store's listing and from
//! facts, and read by the index's own read path, so a page read from it is the page the store
//! would give for the same keys. Only this module makes a store of memory for it; the watcher
//! names keys and bytes, never object_store.
//!
//! A copy may hold a record as listed but not read ([`MemoryIndex::hold_unread`]): a page
//! that needs it stops before it and names it ([`CopyPage::Unread`]), so a record not read is
//! never taken for a missing one (which would drop its card, or judge its marker dead).

use super::store::uncounted;
use super::store::{Expect, Scope, Store};
use crate::index::{Index, ItemId, Key, PageRead, Result, Version};
use crate::index::{UserId, Workspace};
use app::contract::Filter;
use bytes::Bytes;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// An index on memory, written key by key: a live watcher's copy of one workspace. Its
/// requests are memory, never counted as the store's.
#[derive(Clone)]
pub struct MemoryIndex {
    index: Index,
    unread: Arc<Unread>,
}

/// The records a copy listed but has not read, shared with the copy's read path.
#[derive(Debug, Default)]
pub(crate) struct Unread(Mutex<HashSet<Key>>);

impl Unread {
    fn held(&self) -> std::sync::MutexGuard<'_, HashSet<Key>> {
        self.0.lock().expect("copy lock")
    }

    /// Those of `ids` whose records in `ws` are listed but not read, in the order given.
    pub(crate) fn among<'a>(
        &self,
        ws: &Workspace,
        ids: impl IntoIterator<Item = &'a ItemId>,
    ) -> Vec<ItemId> {
        let unread = self.held();
        ids.into_iter()
            .filter(|id| unread.contains(&Key::Record(ws.clone(), (*id).clone())))
            .cloned()
            .collect()
    }
}

/// A page over a copy: the page, or the records it needs next that the copy has not read.
#[derive(Debug)]
pub enum CopyPage {
    Page(PageRead),
    /// Read these ([`MemoryIndex::put`], or [`MemoryIndex::delete`] if the store has none
    /// now) and ask again: the page depends on what they say.
    Unread(Vec<ItemId>),
}

impl Index {
    /// An empty index on memory, judging by this index's limits, cap and clock.
    pub fn empty_copy(&self) -> MemoryIndex {
        let store = Store::memory("memory://live-copy");
        let unread = Arc::new(Unread::default());
        let mut index = Index::new(store, self.limits, self.default_cap, self.clock.clone());
        index.unread = Some(unread.clone());
        MemoryIndex { index, unread }
    }

    /// Every item's key of `ws` with the version it was listed at (one listing of `ws/{ws}/`,
    /// in key order): what a copy compares with what it holds, to read only what changed. The
    /// viewers' looks live apart (`looked/{ws}/{user}`), so however many viewers the workspace
    /// had, this lists only what its pages are made of. What is there and no item's key (a look
    /// still under its first name, until the janitor moves it) is left out.
    pub async fn versions(&self, ws: &Workspace) -> Result<Vec<(Key, Version)>> {
        let mut listed = self
            .store
            .list_versions(&Scope::Workspace(ws.clone()))
            .await?;
        listed.retain(|(key, _)| key.id().is_some());
        Ok(listed)
    }

    /// A key's bytes and the version they were read at, or `None` if it does not exist.
    pub async fn stored(&self, key: &Key) -> Result<Option<(Bytes, Version)>> {
        Ok(self.store.read(key).await?.map(|s| (s.bytes, s.version)))
    }
}

impl MemoryIndex {
    /// This viewer's first page, as [`Index::recent`] gives it from the keys held, or the
    /// records it needs next that are listed but not read.
    pub async fn page(
        &self,
        ws: &Workspace,
        viewer: &UserId,
        filter: Filter,
        cap: u32,
    ) -> Result<CopyPage> {
        let read = uncounted(self.index.recent(ws, viewer, filter, Some(cap), None)).await?;
        Ok(if read.unread.is_empty() {
            CopyPage::Page(read)
        } else {
            CopyPage::Unread(read.unread)
        })
    }

    /// Hold `bytes` under `key`, whatever it held (read now, if it was listed unread).
    pub async fn put(&self, key: &Key, bytes: Bytes) -> Result<()> {
        uncounted(self.index.store.write(key, bytes, Expect::Any)).await?;
        self.unread.held().remove(key);
        Ok(())
    }

    /// Hold a record's key as listed but not read: a page that needs it stops before it.
    pub fn hold_unread(&self, key: &Key) {
        self.unread.held().insert(key.clone());
    }

    /// The ids of `ws` whose records are listed but not read.
    pub fn unread_ids(&self, ws: &Workspace) -> HashSet<ItemId> {
        self.unread
            .held()
            .iter()
            .filter_map(|key| match key {
                Key::Record(of, id) if of == ws => Some(id.clone()),
                _ => None,
            })
            .collect()
    }

    /// Hold an empty key (a marker, an owner marker, a dismissal).
    pub async fn mark(&self, key: &Key) -> Result<()> {
        Ok(uncounted(self.index.store.mark(key)).await?)
    }

    /// Hold `key` no more, read or not; a key not held is fine.
    pub async fn delete(&self, key: &Key) -> Result<()> {
        self.unread.held().remove(key);
        Ok(uncounted(self.index.store.delete(key)).await?)
    }

    /// Every key held of `ws` with its version, in key order (records not read are not).
    pub async fn versions(&self, ws: &Workspace) -> Result<Vec<(Key, Version)>> {
        uncounted(self.index.versions(ws)).await
    }
}
