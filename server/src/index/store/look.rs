//! A viewer's last look at a workspace (`ws/{ws}/looked/{user}`): one small object per viewer,
//! written by that viewer only, with a plain put (never a shared list read, changed and written
//! back). Its body is `{"at": "…"}`, a time in the server's canonical RFC 3339 form.

use super::error::{Result, StoreError};
use super::key::Scope;
use super::{Op, Store, Timer};
use crate::index::Key;
use crate::index::{UserId, Workspace};
use bytes::Bytes;
use chrono::{DateTime, SecondsFormat, Utc};
use futures::TryStreamExt;
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
    /// Names under `ws/{ws}/looked/` that are not looks are logged and left out.
    pub(crate) async fn looks(&self, ws: &Workspace) -> Result<Vec<ListedLook>> {
        let scope = Scope::Looks(ws.clone());
        let metas: Vec<_> = {
            let _timer = Timer::start(Op::List);
            self.inner.list(Some(&scope.prefix())).try_collect().await?
        };
        metrics::counter!(crate::metrics::STORE_KEYS_LISTED).increment(metas.len() as u64);
        let mut found = Vec::new();
        for meta in metas {
            match Key::parse(&meta.location).filter(|k| scope.contains(k)) {
                Some(key) => found.push(ListedLook {
                    key,
                    written_ms: meta.last_modified.timestamp_millis().max(0) as u64,
                }),
                None => {
                    tracing::warn!(%scope, name = %meta.location, "not a key Pickup wrote: kept")
                }
            }
        }
        found.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(found)
    }
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
