//! A viewer's last look at a workspace (`looked/{ws}/{user}`): one small object per viewer,
//! written by that viewer only, with a plain put (never a shared list read, changed and written
//! back). Its body is `{"at": "…"}`, a time in the server's canonical RFC 3339 form.
//!
//! Looks were first kept under the workspace's prefix (`ws/{ws}/looked/{user}`), which every
//! live reconcile lists; the janitor moves each to its name now ([`Store::move_first_looks`]),
//! keeping the later of the two where a viewer has both. Until then a look under its first name
//! is not read: that viewer's next visit is as a first one.

use super::error::{Result, StoreError};
use super::key::{Scope, LOOKED, ROOT};
use super::{Op, Store, Timer};
use crate::index::Key;
use crate::index::{UserId, Workspace};
use bytes::Bytes;
use chrono::{DateTime, SecondsFormat, Utc};
use futures::TryStreamExt;
use object_store::path::Path;
use object_store::PutMode;
use serde::{Deserialize, Serialize};

/// The body of a look, as stored.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LookJson {
    at: String,
}

/// A look as a sweep lists it: whose it is, and when the store last wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListedLook {
    pub key: Key,
    /// The object's last-modified time, by the store's clock (ms since the epoch).
    pub written_ms: u64,
}

/// The look's time as the contract writes times.
pub(crate) fn look_time(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

impl Store {
    /// Keep `at` as `user`'s last look at `ws`, whatever was there: one put.
    pub(crate) async fn put_look(
        &self,
        ws: &Workspace,
        user: &UserId,
        at: DateTime<Utc>,
    ) -> Result<()> {
        let body = serde_json::to_vec(&LookJson { at: look_time(at) }).expect("a look serialises");
        let key = Key::Look(ws.clone(), user.clone());
        self.put(&key.path(), Bytes::from(body), PutMode::Overwrite)
            .await
            .map(drop)
    }

    /// `user`'s last look at `ws`: `None` when there is none. An object there that is not a
    /// look is an error ([`StoreError::Unreadable`]), never "none"; so is a failed read.
    pub(crate) async fn look(
        &self,
        ws: &Workspace,
        user: &UserId,
    ) -> Result<Option<DateTime<Utc>>> {
        let key = Key::Look(ws.clone(), user.clone());
        let Some(stored) = self.read(&key).await? else {
            return Ok(None);
        };
        let unreadable = |reason: String| StoreError::Unreadable {
            key: key.to_string(),
            reason,
        };
        let body: LookJson =
            serde_json::from_slice(&stored.bytes).map_err(|e| unreadable(e.to_string()))?;
        let at =
            DateTime::parse_from_rfc3339(&body.at).map_err(|e| unreadable(format!("at: {e}")))?;
        Ok(Some(at.with_timezone(&Utc)))
    }

    /// Every viewer's look at `ws`, with when each was written (one listing; read by none).
    /// Names under `looked/{ws}/` that are not looks are logged and left out.
    pub(crate) async fn looks(&self, ws: &Workspace) -> Result<Vec<ListedLook>> {
        let scope = Scope::Looks(ws.clone());
        let mut found = Vec::new();
        for (path, written_ms) in self.list_written(&scope.prefix()).await? {
            match Key::parse(&path).filter(|k| scope.contains(k)) {
                Some(key) => found.push(ListedLook { key, written_ms }),
                None => tracing::warn!(%scope, name = %path, "not a key Pickup wrote: kept"),
            }
        }
        found.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(found)
    }

    /// The looks of `ws` still under their first name (`ws/{ws}/looked/{user}`), each with the
    /// look it is moved to (one listing). Names there that are no viewer's are logged and left.
    pub(crate) async fn first_looks(&self, ws: &Workspace) -> Result<Vec<(Path, ListedLook)>> {
        let mut found = Vec::new();
        for (path, written_ms) in self.list_written(&first_names(ws)).await? {
            let user = match path.parts().collect::<Vec<_>>()[..] {
                [_, _, _, ref user] => UserId::parse(user.as_ref()).ok(),
                _ => None,
            };
            match user {
                Some(user) => {
                    let key = Key::Look(ws.clone(), user);
                    found.push((path, ListedLook { key, written_ms }));
                }
                None => tracing::warn!(%ws, name = %path, "not a look Pickup wrote: kept"),
            }
        }
        found.sort_by(|a, b| a.1.key.cmp(&b.1.key));
        Ok(found)
    }

    /// Move each look of `ws` still under its first name to its name now (a read, a
    /// create-only put and a delete each; one listing when there is none). A viewer who has
    /// both (a look written since the upgrade) keeps the later. Answers how many moved.
    pub(crate) async fn move_first_looks(&self, ws: &Workspace) -> Result<usize> {
        let mut moved = 0;
        for (old, listed) in self.first_looks(ws).await? {
            let Some(stored) = self.read_path(&old).await? else {
                // Moved by another server since the listing.
                continue;
            };
            let new = listed.key.path();
            match self.put(&new, stored.bytes.clone(), PutMode::Create).await {
                Ok(_) => {}
                Err(StoreError::Exists) => {
                    let Key::Look(ws, user) = &listed.key else {
                        unreachable!("first_looks lists looks")
                    };
                    // An unreadable look is older than any readable one.
                    let kept = self.look(ws, user).await.ok().flatten();
                    if body_time(&stored.bytes).is_some_and(|first| Some(first) > kept) {
                        self.put(&new, stored.bytes, PutMode::Overwrite).await?;
                    }
                }
                Err(e) => return Err(e),
            }
            self.delete_path(&old).await?;
            moved += 1;
        }
        if moved > 0 {
            tracing::info!(%ws, moved, "moved viewers' looks from ws/{{ws}}/looked/ to looked/{{ws}}/");
        }
        Ok(moved)
    }

    /// Each object under `prefix` with its last-modified time (ms since the epoch): one
    /// listing.
    async fn list_written(&self, prefix: &Path) -> Result<Vec<(Path, u64)>> {
        let metas: Vec<_> = {
            let _timer = Timer::start(Op::List);
            self.inner.list(Some(prefix)).try_collect().await?
        };
        metrics::counter!(crate::metrics::STORE_KEYS_LISTED).increment(metas.len() as u64);
        Ok(metas
            .into_iter()
            .map(|m| (m.location, m.last_modified.timestamp_millis().max(0) as u64))
            .collect())
    }
}

/// Where the looks of `ws` were first kept: a directory of the workspace's, named as the root
/// of looks is now.
fn first_names(ws: &Workspace) -> Path {
    Path::from(format!("{ROOT}/{ws}/{LOOKED}"))
}

/// The time a look's body holds, if it is a look.
fn body_time(bytes: &[u8]) -> Option<DateTime<Utc>> {
    let body: LookJson = serde_json::from_slice(bytes).ok()?;
    let at = DateTime::parse_from_rfc3339(&body.at).ok()?;
    Some(at.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::ObjectStoreExt;

    fn ws() -> Workspace {
        Workspace::parse("acme").unwrap()
    }

    fn ada() -> UserId {
        UserId::parse("ada").unwrap()
    }

    #[tokio::test]
    async fn a_look_reads_back_as_it_was_put() {
        let store = Store::memory("memory://look");
        assert_eq!(store.look(&ws(), &ada()).await.unwrap(), None);
        let at = DateTime::parse_from_rfc3339("2026-12-03T10:00:00.123Z")
            .unwrap()
            .with_timezone(&Utc);
        store.put_look(&ws(), &ada(), at).await.unwrap();
        assert_eq!(store.look(&ws(), &ada()).await.unwrap(), Some(at));
        let raw = store
            .inner
            .get(&Key::Look(ws(), ada()).path())
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert_eq!(&raw[..], br#"{"at":"2026-12-03T10:00:00.123Z"}"#);
        let listed = store.looks(&ws()).await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].key, Key::Look(ws(), ada()));
    }

    #[tokio::test]
    async fn a_body_that_is_not_a_look_is_an_error_not_none() {
        let store = Store::memory("memory://look");
        for junk in [&b"{"[..], br#"{"at":"yesterday"}"#, br#"{"at":null}"#, b""] {
            store
                .inner
                .put(
                    &Key::Look(ws(), ada()).path(),
                    object_store::PutPayload::from_static(junk),
                )
                .await
                .unwrap();
            let read = store.look(&ws(), &ada()).await;
            assert!(
                matches!(read, Err(StoreError::Unreadable { .. })),
                "{junk:?}: {read:?}"
            );
        }
    }
}
