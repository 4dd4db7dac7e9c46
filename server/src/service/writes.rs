//! The writes: each runs to its end even if its caller leaves ([`Pickup::to_the_end`]), and
//! what it changed is announced to the live watchers as a [`Fact`].

use super::Pickup;
use crate::auth::{Authorized, Read, Write};
use crate::error::{Error, Result};
use crate::index::{ItemId, Version};
use crate::live::{Change, Fact};
use app::contract::{ItemRecord, ItemUpdate, LastLook, NewItem};

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

    /// Hide one item for the caller; a pin of it goes too (a dismissed item is not wanted at
    /// the top either).
    pub async fn dismiss_item(&self, who: &Authorized<Read>, id: ItemId) -> Result<()> {
        let this = self.clone();
        let (ws, user) = (who.ws().clone(), who.user().clone());
        self.to_the_end(async move {
            this.index.dismiss(&ws, &user, &id).await?;
            let pinned = this.index.pins(&ws, &user).await?.contains(&id);
            if pinned {
                this.index.unpin(&ws, &user, &id).await?;
            }
            let (dismissed, unpinned) = (
                Fact {
                    ws: ws.clone(),
                    change: Change::Dismissed {
                        user: user.clone(),
                        id: id.clone(),
                    },
                },
                Fact {
                    ws,
                    change: Change::Pinned {
                        user,
                        id,
                        pinned: false,
                    },
                },
            );
            this.announce(Some(dismissed));
            this.announce(pinned.then_some(unpinned));
            Ok(())
        })
        .await
    }

    /// Pin (`pinned`) or unpin one item for the caller only: under the caller's own key (the
    /// verified token's user), at most [`crate::index::MAX_PINS`] per workspace.
    pub async fn pin_item(&self, who: &Authorized<Read>, id: ItemId, pinned: bool) -> Result<()> {
        let this = self.clone();
        let (ws, user) = (who.ws().clone(), who.user().clone());
        self.to_the_end(async move {
            match pinned {
                true => this.index.pin(&ws, &user, &id).await?,
                false => this.index.unpin(&ws, &user, &id).await?,
            }
            this.announce(Some(Fact {
                ws,
                change: Change::Pinned { user, id, pinned },
            }));
            Ok(())
        })
        .await
    }

    /// The caller looked at the workspace as it was at `at` (RFC 3339): kept under the
    /// caller's own key (the verified token's user), never later than now. Answers the look
    /// kept. No fact is announced: nothing live depends on a look (each widget reads its
    /// viewer's once per visit), so the watchers and the bus never hear of it.
    pub async fn look(&self, who: &Authorized<Read>, at: &str) -> Result<LastLook> {
        let at = chrono::DateTime::parse_from_rfc3339(at)
            .map_err(|e| {
                Error::MalformedBody(format!(
                    "at: {e}; a look's time is an RFC 3339 time, such as a page's generated_at (2026-12-03T10:00:00.000Z)"
                ))
            })?
            .with_timezone(&chrono::Utc);
        let this = self.clone();
        let (ws, user) = (who.ws().clone(), who.user().clone());
        self.to_the_end(async move { Ok(this.index.look(&ws, &user, at).await?) })
            .await
    }
}
