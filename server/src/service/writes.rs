//! The writes: each runs to its end even if its caller leaves ([`Pickup::to_the_end`]), and
//! what it changed is announced to the live watchers as a [`Fact`].

use super::Pickup;
use crate::error::Result;
use crate::http::{Authorized, Read, Write};
use crate::index::{ItemId, Version};
use crate::live::{Change, Fact};
use app::contract::{ItemRecord, ItemUpdate, NewItem};

impl Pickup {
    /// Registers a new run of `item.key`, owned by the caller. Counted here, in the write,
    /// which ends even when the client has hung up (refusals before it count where they
    /// happen: [`crate::metrics::registration`]).
    pub async fn register(&self, who: &Authorized<Write>, item: NewItem) -> Result<ItemRecord> {
        let this = self.clone();
        let ws = who.ws().clone();
        let producer = who.caller().producer();
        self.to_the_end(async move {
            let registered = this.index.register_versioned(&ws, &item, &producer).await;
            crate::metrics::registration(registered.as_ref().map(drop).map_err(|e| e.code()));
            let (record, version) = registered?;
            this.announce(Fact::record(&ws, &record, true, Some(version)));
            Ok(record)
        })
        .await
    }

    /// The whole record as the producer now sees it (its owner only); with `if_match`, a
    /// compare-and-set. Answers the record and its new `ETag`.
    pub async fn update(
        &self,
        who: &Authorized<Write>,
        id: ItemId,
        up: ItemUpdate,
        if_match: Option<String>,
    ) -> Result<(ItemRecord, Option<String>)> {
        let this = self.clone();
        let (ws, user) = (who.ws().clone(), who.user().clone());
        self.to_the_end(async move {
            let updated = this.index.update(&ws, &id, &up, &user, if_match).await?;
            let version = updated
                .1
                .as_deref()
                .and_then(|v| Version::from_validator(v).ok());
            this.announce(Fact::record(&ws, &updated.0, false, version));
            Ok(updated)
        })
        .await
    }

    pub async fn remove(&self, who: &Authorized<Write>, id: ItemId) -> Result<()> {
        let this = self.clone();
        let (ws, user) = (who.ws().clone(), who.user().clone());
        self.to_the_end(async move {
            this.index.remove(&ws, &id, &user).await?;
            this.announce(Some(Fact {
                ws,
                change: Change::Removed { id, owner: user },
            }));
            Ok(())
        })
        .await
    }

    pub async fn dismiss_item(&self, who: &Authorized<Read>, id: ItemId) -> Result<()> {
        let this = self.clone();
        let (ws, user) = (who.ws().clone(), who.user().clone());
        self.to_the_end(async move {
            this.index.dismiss(&ws, &user, &id).await?;
            this.announce(Some(Fact {
                ws,
                change: Change::Dismissed { user, id },
            }));
            Ok(())
        })
        .await
    }
}
