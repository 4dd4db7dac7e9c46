//! The reads: a page (its dead markers deleted after the answer), a record, a live
//! subscription, and what the doors check an id or a write's answer with.

use super::Pickup;
use crate::auth::{Authorized, Read};
use crate::error::{Error, Result};
use crate::index::{ItemId, SharedPage};
use crate::live::Subscription;
use app::contract::{Filter, ItemRecord, LastLook};
use std::time::Duration;

impl Pickup {
    /// An item id from a path or query, checked against this server's clock.
    pub fn item_id(&self, raw: &str) -> Result<ItemId> {
        Ok(self.index.item_id(raw)?)
    }

    /// How long until the TTL deletes `id` by its name ([`crate::index::Index::expires_in`]):
    /// what a write's answer tells its producer.
    pub fn expires_in(&self, id: &ItemId) -> Duration {
        self.index.expires_in(id)
    }

    /// A live subscription to this viewer's page, and when the token stops being valid.
    pub fn subscribe(
        &self,
        who: &Authorized<Read>,
        views: &[(Filter, Option<u32>)],
    ) -> Result<(Vec<Subscription>, u64)> {
        let live = self
            .live
            .as_ref()
            .ok_or_else(|| Error::NotSupported("this server does not serve live streams".into()))?;
        let subs = live.subscribe(who.ws(), who.user(), views)?;
        Ok((subs, who.caller().expires_at))
    }

    /// The record and its `ETag`.
    pub async fn get(
        &self,
        who: &Authorized<Read>,
        id: &ItemId,
    ) -> Result<(ItemRecord, Option<String>)> {
        Ok(self.index.get(who.ws(), id).await?)
    }

    /// The caller's own last look at the workspace (the user is the verified token's, never
    /// the request's): `{"at": null}` only when there is none, never on an error.
    pub async fn looked(&self, who: &Authorized<Read>) -> Result<LastLook> {
        Ok(self.index.looked(who.ws(), who.user()).await?)
    }

    /// The items the caller pinned, newest first (their own, never another's).
    pub async fn pins(&self, who: &Authorized<Read>) -> Result<app::contract::Pins> {
        let pins = self.index.pins(who.ws(), who.user()).await?;
        Ok(app::contract::Pins {
            pins: pins.iter().map(ItemId::to_string).collect(),
        })
    }

    /// The read path. The markers it found dead are deleted after the answer, in the background.
    /// `before`: the last id of the page the caller has; the answer is the next page.
    pub async fn recent_page(
        &self,
        who: &Authorized<Read>,
        filter: Filter,
        cap: Option<u32>,
        before: Option<&ItemId>,
    ) -> Result<SharedPage> {
        let read = self
            .index
            .recent(who.ws(), who.user(), filter, cap, before)
            .await?;
        if !read.prune.deletes.is_empty() {
            let index = self.index.clone();
            self.background.spawn(async move {
                index.apply(&read.prune).await;
            });
        }
        Ok(read.page)
    }
}
