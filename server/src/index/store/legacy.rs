//! Moving keys of the old kind-first layout (`markers/{ws}/{id}`, `items/{ws}/{id}.json`, …)
//! to the workspace-first one (`ws/{ws}/markers/{id}`, …), so that a store written by an
//! older Pickup keeps its items.
//!
//! Each old key is copied to its new name create-only and deleted only once the new name
//! holds the same bytes: a move cut short leaves both, and the next move finishes it. Records
//! move before owner markers and markers ([`LEGACY_ROOTS`]), as a registration writes them, so
//! a reader never meets a moved marker whose record is still under its old name.

use super::error::{Result, StoreError};
use super::key::LEGACY_ROOTS;
use super::{Op, Store, Timer};
use crate::index::{Key, KeyKind};
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::PutMode;

/// What one move did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Moved {
    /// Old keys now under their new names (and deleted under the old).
    pub moved: usize,
    /// Old keys left where they are: the new name holds something else, which a server of
    /// the new layout wrote, so it is the newer.
    pub kept: usize,
    /// Names under the old roots that are not Pickup's keys: left alone and logged.
    pub strays: usize,
}

impl Store {
    /// Move every key of the old layout to its new name (one listing per old root, then a
    /// read, a write and a delete per key). A store with none costs four listings.
    pub(crate) async fn move_legacy(&self) -> Result<Moved> {
        let mut done = Moved::default();
        for root in LEGACY_ROOTS {
            let listed: Vec<_> = {
                let _timer = Timer::start(Op::List);
                self.inner
                    .list(Some(&Path::from(root)))
                    .try_collect()
                    .await?
            };
            // Concurrently within a root (a large store would otherwise take a round trip
            // after another at start-up), one root after another: records before markers.
            let mut moves = futures::stream::iter(listed)
                .map(|meta| self.move_one(meta.location))
                .buffer_unordered(MOVES_AT_ONCE);
            while let Some(one) = moves.next().await {
                match one? {
                    One::Moved => done.moved += 1,
                    One::Kept => done.kept += 1,
                    One::Stray => done.strays += 1,
                    One::Gone => {}
                }
            }
        }
        if done != Moved::default() {
            tracing::info!(
                moved = done.moved,
                kept = done.kept,
                strays = done.strays,
                "moved keys of the old kind-first layout to ws/{{ws}}/…"
            );
        }
        Ok(done)
    }

    /// Every key of the old layout a move would move (one listing per old root); names that
    /// are not Pickup's keys are left out, as a move leaves them.
    pub(crate) async fn legacy_keys(&self) -> Result<Vec<Key>> {
        let mut keys = Vec::new();
        for root in LEGACY_ROOTS {
            let _timer = Timer::start(Op::List);
            let listed: Vec<_> = self
                .inner
                .list(Some(&Path::from(root)))
                .try_collect()
                .await?;
            keys.extend(listed.iter().filter_map(|m| Key::parse_legacy(&m.location)));
        }
        Ok(keys)
    }

    /// The bytes of `key` as a move would leave them: under its new name, else (not moved
    /// yet) under its old one.
    pub(crate) async fn read_moved(&self, key: &Key) -> Result<Option<super::Stored>> {
        match (self.read(key).await?, key.legacy_path()) {
            (Some(stored), _) => Ok(Some(stored)),
            (None, Some(old)) => self.read_path(&old).await,
            (None, None) => Ok(None),
        }
    }

    /// Move the key at the old path `old`. A marker's record goes first if it is not under
    /// its new name yet: an older server may have registered the item after this move
    /// listed the records, and a marker without its record is taken for dead once the grace
    /// period is over.
    async fn move_one(&self, old: Path) -> Result<One> {
        let Some(key) = Key::parse_legacy(&old) else {
            tracing::warn!(path = %old, "not a key of Pickup's old layout: left alone");
            return Ok(One::Stray);
        };
        // Every key of the old layout names an item (no old layout had looks).
        if let (false, Some(id)) = (key.kind() == KeyKind::Record, key.id()) {
            let record = Key::Record(key.ws().clone(), id.clone());
            if let (false, Some(old_record)) = (self.exists(&record).await?, record.legacy_path()) {
                self.move_key(old_record, &record).await?;
            }
        }
        self.move_key(old, &key).await
    }

    /// Copy `old` to `key`'s name create-only, then delete `old`.
    async fn move_key(&self, old: Path, key: &Key) -> Result<One> {
        let Some(stored) = self.read_path(&old).await? else {
            // Moved or deleted by another server since the listing.
            return Ok(One::Gone);
        };
        match self.put(&key.path(), stored.bytes, PutMode::Create).await {
            Ok(_) => {
                self.delete_path(&old).await?;
                Ok(One::Moved)
            }
            Err(StoreError::Exists) => {
                tracing::warn!(path = %old, new = %key, "the new name holds other bytes: the old key is left where it is");
                Ok(One::Kept)
            }
            Err(e) => Err(e),
        }
    }
}

/// How many keys are moved at once.
const MOVES_AT_ONCE: usize = 16;

/// What became of one old key.
enum One {
    Moved,
    Kept,
    Stray,
    Gone,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{ItemId, SubKey, UserId, Workspace};
    use bytes::Bytes;
    use object_store::memory::InMemory;
    use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
    use std::sync::Arc;

    fn id(key: &str) -> ItemId {
        ItemId::new(1_700_000_000_000, SubKey::parse(key).unwrap()).unwrap()
    }

    async fn put(store: &InMemory, path: &str, bytes: &'static [u8]) {
        store
            .put(&Path::from(path), PutPayload::from_static(bytes))
            .await
            .unwrap();
    }

    async fn paths(store: &InMemory) -> Vec<String> {
        let mut out: Vec<String> = store
            .list(None)
            .map_ok(|m| m.location.to_string())
            .try_collect()
            .await
            .unwrap();
        out.sort();
        out
    }

    #[tokio::test]
    async fn old_keys_move_to_their_new_names_and_nothing_else_is_touched() {
        let inner = Arc::new(InMemory::new());
        let (a, b) = (id("a"), id("b"));
        put(&inner, &format!("items/acme/{a}.json"), b"{\"a\":1}").await;
        put(&inner, &format!("markers/acme/{a}"), b"").await;
        put(&inner, &format!("owners/acme/ada/{a}"), b"").await;
        put(&inner, &format!("dismissed/acme/bo/{a}"), b"").await;
        put(&inner, "markers/acme/junk", b"").await;
        // Written since by the new layout: it wins, and the old copy stays.
        put(&inner, &format!("items/acme/{b}.json"), b"old").await;
        put(&inner, &format!("ws/acme/items/{b}.json"), b"new").await;
        let store = Store::wrap(inner.clone(), super::super::ListOrder::Sorted, "memory://");

        let done = store.move_legacy().await.unwrap();
        assert_eq!(
            done,
            Moved {
                moved: 4,
                kept: 1,
                strays: 1
            }
        );
        let ws = Workspace::parse("acme").unwrap();
        let ada = UserId::parse("ada").unwrap();
        let bo = UserId::parse("bo").unwrap();
        let mut want = vec![
            format!("items/acme/{b}.json"),
            "markers/acme/junk".to_string(),
            Key::Record(ws.clone(), a.clone()).path().to_string(),
            Key::Marker(ws.clone(), a.clone()).path().to_string(),
            Key::OwnerMarker(ws.clone(), ada, a.clone())
                .path()
                .to_string(),
            Key::Dismissal(ws.clone(), bo, a.clone()).path().to_string(),
            Key::Record(ws.clone(), b.clone()).path().to_string(),
        ];
        want.sort();
        assert_eq!(paths(&inner).await, want);
        let record = store
            .read(&Key::Record(ws.clone(), a))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(record.bytes, Bytes::from_static(b"{\"a\":1}"));
        let kept = store.read(&Key::Record(ws, b)).await.unwrap().unwrap();
        assert_eq!(kept.bytes, Bytes::from_static(b"new"));

        // A second move finds only what it left, and changes nothing.
        let again = store.move_legacy().await.unwrap();
        assert_eq!(again.moved, 0);
        assert_eq!(paths(&inner).await, want);
    }

    /// A marker whose record was written under its old name after the records were listed
    /// (an older server registering during the move) brings its record with it.
    #[tokio::test]
    async fn a_marker_never_arrives_before_its_record() {
        let inner = Arc::new(InMemory::new());
        let c = id("c");
        put(&inner, &format!("items/acme/{c}.json"), b"{}").await;
        put(&inner, &format!("markers/acme/{c}"), b"").await;
        let store = Store::wrap(inner.clone(), super::super::ListOrder::Sorted, "memory://");
        let ws = Workspace::parse("acme").unwrap();

        store
            .move_one(Path::from(format!("markers/acme/{c}")))
            .await
            .unwrap();
        let mut want = vec![
            Key::Record(ws.clone(), c.clone()).path().to_string(),
            Key::Marker(ws, c).path().to_string(),
        ];
        want.sort();
        assert_eq!(paths(&inner).await, want);
    }
}
