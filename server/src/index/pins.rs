//! Pins: a viewer keeps an item at the top of their own list, in Mine and Everyone, above the
//! cap's cards, until they unpin it or its record is gone. One empty key per pin under the
//! viewer's own name (`ws/{ws}/pinned/{user}/{id}`), written and deleted by that viewer only:
//! nothing is read, modified and written back, and a pin follows the viewer to every device.
//!
//! A pinned item finished longer ago than keep-finished stays on its pinner's list: a marker
//! finished long ago goes without its record (`Index::apply`), and the janitor keeps the record
//! of a pinned item until the pin goes or the id passes the TTL.

use super::core::verdict::{judge, Verdict};
use super::marker_index::Index;
use super::store::Scope;
use crate::index::{IndexError, ItemId, Key, Result, UserId, Workspace};
use app::contract::Card;
use std::collections::BTreeSet;

/// How many items one viewer may pin in one workspace: a pin is above the cap, so the list
/// stays a glance.
pub const MAX_PINS: usize = 10;

/// What a viewer's pinned items read as, for the top of their first page.
#[derive(Debug, Default)]
pub(super) struct Pinned {
    /// Newest item first, each marked pinned.
    pub cards: Vec<Card>,
    /// A pinned item's record could not be read: the page may lack its card.
    pub partial: bool,
    /// The pinned records a live copy has listed but not read: the page waits for them.
    pub unread: Vec<ItemId>,
}

impl Index {
    /// The items `viewer` pinned in `ws` (one listing, through the read cache when there is
    /// one), newest first.
    pub async fn pins(&self, ws: &Workspace, viewer: &UserId) -> Result<BTreeSet<ItemId>> {
        let scope = Scope::Pins(ws.clone(), viewer.clone());
        let found = match &self.cache {
            Some(cache) => cache.list_or_before(&scope).await?,
            None => std::sync::Arc::new(self.store.list(&scope).await?),
        };
        Ok(found.ids().cloned().collect())
    }

    /// Pin `id` for `viewer`: only an item that has a record (404 otherwise), and at most
    /// [`MAX_PINS`] (the one after gets [`IndexError::TooManyPins`], and nothing is written).
    /// Pinning a pinned item again is fine.
    pub async fn pin(&self, ws: &Workspace, viewer: &UserId, id: &ItemId) -> Result<()> {
        if !self
            .store
            .exists(&Key::Record(ws.clone(), id.clone()))
            .await?
        {
            return Err(IndexError::NotFound);
        }
        let scope = Scope::Pins(ws.clone(), viewer.clone());
        let pinned: BTreeSet<ItemId> = self.store.list(&scope).await?.ids().cloned().collect();
        if !pinned.contains(id) && pinned.len() >= MAX_PINS {
            return Err(IndexError::TooManyPins(MAX_PINS));
        }
        self.store
            .mark(&Key::Pin(ws.clone(), viewer.clone(), id.clone()))
            .await?;
        self.invalidate_cache(ws);
        Ok(())
    }

    /// Unpin `id` for `viewer`; unpinning what is not pinned is fine.
    pub async fn unpin(&self, ws: &Workspace, viewer: &UserId, id: &ItemId) -> Result<()> {
        self.store
            .delete(&Key::Pin(ws.clone(), viewer.clone(), id.clone()))
            .await?;
        self.invalidate_cache(ws);
        Ok(())
    }

    /// The cards of `pinned`, read from their records: judged as any card (a stalled run is
    /// stalled) but for keep-finished, which a pin outlasts. An item whose record is gone, or
    /// whose id passed the TTL, is left out; one that cannot be read makes the page partial.
    pub(super) async fn pinned_cards(
        &self,
        ws: &Workspace,
        pinned: &BTreeSet<ItemId>,
        now: u64,
    ) -> Pinned {
        let limits = super::core::verdict::Limits {
            keep_finished_ms: u64::MAX,
            ..self.limits
        };
        let mut out = Pinned::default();
        if let Some(unread) = &self.unread {
            out.unread = unread.among(ws, pinned);
            if !out.unread.is_empty() {
                return out;
            }
        }
        let alive = pinned
            .iter()
            .filter(|id| now.saturating_sub(id.created_ms()) <= limits.ttl_ms);
        let lookups = futures::future::join_all(
            alive.map(|id| async move { (id, self.lookup(ws, id).await) }),
        )
        .await;
        for (id, lookup) in lookups {
            match judge(id, lookup, now, &limits) {
                Verdict::Live(card) => out.cards.push(Card {
                    pinned: true,
                    ..*card
                }),
                Verdict::Unknown(why) => {
                    tracing::warn!(%ws, %id, why, "could not read a pinned item");
                    out.partial = true;
                }
                Verdict::Dead(_) | Verdict::Pending => {}
            }
        }
        out
    }
}
