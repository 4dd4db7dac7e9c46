//! The write path: each write touches only its own item's keys and reads nothing shared, so
//! concurrent producers never overwrite each other.

use super::core::record::{new_record, owner_and_time, updated_record};
use super::marker_index::Index;
use super::read::unreadable;
use super::store::{look_time, Expect, StoreError, Stored};
use crate::index::ItemId;
use crate::index::{IndexError, Producer, Result};
use crate::index::{Key, Version};
use crate::index::{UserId, Workspace};
use app::contract::LastLook;
use app::contract::{ItemRecord, ItemUpdate, NewItem, Owner};
use chrono::{DateTime, Utc};

/// How many times register moves `created_ms` on by 1 ms when its id is taken.
const CREATE_ATTEMPTS: u64 = 5;

/// How many times an update reads again after the record changed between its read and its
/// write (a concurrent update by the same producer).
const UPDATE_ATTEMPTS: usize = 5;

impl Index {
    /// Write the record with a create-only put, then the empty marker. Reads nothing shared.
    /// Transient faults are retried ([`Store::put`]); a put the store applied but whose answer
    /// was lost is recognised by reading it back, so it is neither lost nor recorded twice.
    pub async fn register(
        &self,
        ws: &Workspace,
        item: &NewItem,
        producer: &Producer,
    ) -> Result<ItemRecord> {
        Ok(self.register_versioned(ws, item, producer).await?.0)
    }

    /// [`Index::register`], with the version the record was written at: what a live fact
    /// carries, so that no watcher reads the record again to learn it.
    pub async fn register_versioned(
        &self,
        ws: &Workspace,
        item: &NewItem,
        producer: &Producer,
    ) -> Result<(ItemRecord, Version)> {
        let owner = producer.owner();
        let key = crate::index::SubKey::parse(&item.key)?;
        // Dated by the store's clock when this server's is off it (`clock_check`): an id
        // carries its creation time, and every server and reader compares them.
        let now = self.now_for_writes().await;
        for attempt in 0..CREATE_ATTEMPTS {
            let id = ItemId::new(now + attempt, key.clone())?;
            let record = new_record(ws, &id, item, owner.clone())?;
            let body =
                bytes::Bytes::from(serde_json::to_vec(&record).expect("a record serialises"));
            let key = Key::Record(ws.clone(), id.clone());
            match self.store.write(&key, body, Expect::Absent).await {
                Ok(version) => {
                    // The owner's marker before the workspace's: once an item is listed, it
                    // is listed among its owner's too. The record is there before both.
                    for marker in [
                        Key::OwnerMarker(ws.clone(), producer.user.clone(), id.clone()),
                        Key::Marker(ws.clone(), id),
                    ] {
                        self.store.mark(&marker).await?;
                    }
                    self.invalidate_cache(ws);
                    return Ok((record, version));
                }
                Err(StoreError::Exists) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(IndexError::IdsTaken {
            key: key.to_string(),
            attempts: CREATE_ATTEMPTS,
        })
    }

    /// Write the whole record the producer sends, after checking that the item exists (404)
    /// and that the caller owns it (403). With `if_match` (a validator a GET or PUT of this
    /// record handed out: [`Version::validator`]) the write is the caller's compare-and-set
    /// (412 on a lost race; 501 on a store that cannot). Without it, the write is still
    /// conditional on the version just read where the store can do that, so an update racing
    /// a removal never re-creates the record; where it cannot (the local file system), it is a
    /// plain write, and a record it re-creates has no marker: the janitor deletes it.
    pub async fn update(
        &self,
        ws: &Workspace,
        id: &ItemId,
        up: &ItemUpdate,
        caller: &UserId,
        if_match: Option<String>,
    ) -> Result<(ItemRecord, Option<String>)> {
        let key = Key::Record(ws.clone(), id.clone());
        for _ in 0..UPDATE_ATTEMPTS {
            let (owner, version, last) = self.owned_record(ws, id, caller).await?;
            // Each write of a record is dated after the one it replaces, so "the newer
            // updated_at" is "the later write" for every reader of facts (`live::replica`),
            // even when a registration's id was dated a millisecond ahead or the previous
            // writer's clock ran ahead within the skew `clock_check` allows.
            let at = self.now_for_writes().await.max(last + 1);
            let record = updated_record(ws, id, up, owner, at)?;
            let body =
                bytes::Bytes::from(serde_json::to_vec(&record).expect("a record serialises"));
            let expected = match &if_match {
                Some(validator) => Version::from_validator(validator)?,
                None => version,
            };
            let written = match self
                .store
                .write(&key, body.clone(), Expect::Version(expected))
                .await
            {
                // This store has no conditional writes: a plain write, unless the caller asked
                // for a compare-and-set, which is then refused rather than silently dropped.
                Err(StoreError::NotSupported(_)) if if_match.is_none() => {
                    self.store.write(&key, body, Expect::Any).await
                }
                // Changed since our read (a concurrent update, or a removal): read again.
                Err(StoreError::Precondition) if if_match.is_none() => continue,
                other => other,
            }?;
            self.invalidate_cache(ws);
            return Ok((record, written.validator()));
        }
        Err(IndexError::PreconditionFailed)
    }

    /// The record's owner, version and last write (ms), if it exists and `caller` owns it.
    async fn owned_record(
        &self,
        ws: &Workspace,
        id: &ItemId,
        caller: &UserId,
    ) -> Result<(Owner, Version, u64)> {
        let key = Key::Record(ws.clone(), id.clone());
        let Some(Stored { bytes, version }) = self.store.read(&key).await? else {
            return Err(IndexError::NotFound);
        };
        let (owner, last) = owner_and_time(&bytes).ok_or_else(|| unreadable(id))?;
        if owner.sub != caller.as_str() {
            return Err(IndexError::NotOwner);
        }
        Ok((owner, version, last))
    }

    /// The record and its validator (the `ETag` to send back in `If-Match`).
    pub async fn get(&self, ws: &Workspace, id: &ItemId) -> Result<(ItemRecord, Option<String>)> {
        let key = Key::Record(ws.clone(), id.clone());
        let Some(Stored { bytes, version }) = self.store.read(&key).await? else {
            return Err(IndexError::NotFound);
        };
        let record = serde_json::from_slice(&bytes).map_err(|_| unreadable(id))?;
        Ok((record, version.validator()))
    }

    /// Delete the marker first (the item leaves every reader's view), then the record. Only
    /// the owner may; an item with no record is 404 and nothing is deleted.
    pub async fn remove(&self, ws: &Workspace, id: &ItemId, caller: &UserId) -> Result<()> {
        self.owned_record(ws, id, caller).await?;
        for key in [
            Key::Marker(ws.clone(), id.clone()),
            Key::OwnerMarker(ws.clone(), caller.clone(), id.clone()),
            Key::Record(ws.clone(), id.clone()),
        ] {
            self.store.delete(&key).await?;
        }
        self.invalidate_cache(ws);
        Ok(())
    }

    /// A fact under the viewer's own key: "I dismissed this item". Only of an item that has a
    /// record (404 otherwise, and nothing is written).
    pub async fn dismiss(&self, ws: &Workspace, user: &UserId, id: &ItemId) -> Result<()> {
        if !self
            .store
            .exists(&Key::Record(ws.clone(), id.clone()))
            .await?
        {
            return Err(IndexError::NotFound);
        }
        self.store
            .mark(&Key::Dismissal(ws.clone(), user.clone(), id.clone()))
            .await?;
        self.invalidate_cache(ws);
        Ok(())
    }

    /// Keep `at` as `viewer`'s last look at `ws`, under the viewer's own key: one plain put,
    /// nothing read, nothing shared. A look is never in the future: what is kept is the earlier
    /// of `at` and now (the time writes are dated by, from the last clock check: no request to
    /// the store besides the put), to the millisecond. Answers the time kept.
    pub async fn look(
        &self,
        ws: &Workspace,
        viewer: &UserId,
        at: DateTime<Utc>,
    ) -> Result<LastLook> {
        let now = super::core::record::ms_to_time(self.now_for_writes_cached());
        let at = DateTime::from_timestamp_millis(at.timestamp_millis()).unwrap_or_default();
        let kept = at.min(now);
        self.store.put_look(ws, viewer, kept).await?;
        Ok(LastLook {
            at: Some(look_time(kept)),
        })
    }
}
