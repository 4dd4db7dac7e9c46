//! One implementation, three doors: every operation of Pickup, called by the REST routes, the
//! live route and the widget's server functions alike. Each takes an [`Authorized`] caller (the
//! token verified once, by the door) and typed ids, and only then touches the store.

use super::auth::{Auth, Authorized, Read, Write};
use crate::error::{Error, Result};
use crate::index::store::Version;
use crate::index::{Index, ItemId};
use crate::live::{Change, Fact, Live, LiveConfig, Subscription};
use app::contract::{ApiError, Filter, ItemRecord, ItemUpdate, NewItem, RecentPage};
use std::sync::Arc;
use tokio::time::Instant;
use tokio_util::task::TaskTracker;

/// What [`Pickup::drain`] let finish: `true` when all of that kind did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drained {
    pub writes: bool,
    pub deletes: bool,
}

#[derive(Clone)]
pub struct Pickup {
    pub index: Arc<Index>,
    pub auth: Arc<Auth>,
    /// Deletes that run after an answer was sent; graceful shutdown waits for them.
    pub background: TaskTracker,
    /// Writes, run to their end even if their caller leaves ([`Pickup::to_the_end`]); shutdown
    /// waits for them longer than for the deletes ([`Pickup::drain`]).
    pub writes: TaskTracker,
    /// The watchers of live streams (`serve` turns them on).
    pub live: Option<Arc<Live>>,
}

impl Pickup {
    pub fn new(index: Index, auth: Auth) -> Self {
        Pickup {
            index: Arc::new(index),
            auth: Arc::new(auth),
            background: TaskTracker::new(),
            writes: TaskTracker::new(),
            live: None,
        }
    }

    /// Serve live streams, kept up to date as `config` says.
    pub fn with_live(mut self, config: LiveConfig) -> anyhow::Result<Self> {
        self.live = Some(Live::new(self.index.clone(), config)?);
        Ok(self)
    }

    /// Run a write to its end even if its caller stops waiting: the client hung up, or the
    /// request timed out (408). A write is several store requests (a register writes the record,
    /// the owner marker, then the workspace's marker), and one dropped half-way would leave an
    /// item that "Mine" shows and the workspace does not. Shutdown waits for it ([`Pickup::drain`]).
    async fn to_the_end<T: Send + 'static>(
        &self,
        write: impl std::future::Future<Output = Result<T>> + Send + 'static,
    ) -> Result<T> {
        match self.writes.spawn(write).await {
            Ok(done) => done,
            // Not cancelled: nothing aborts these tasks, and the runtime outlives the server.
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }

    /// At shutdown, once the connections are done: lets the writes still running finish until
    /// `writes_by`, and the deletes reads scheduled until `deletes_by`. The two differ because a
    /// write cut half-way leaves an item "Mine" shows and the workspace does not, while a delete
    /// cut short simply happens again on a later read. Both are bounded: the store's requests
    /// have timeouts, but a process asked to stop must stop.
    pub async fn drain(&self, deletes_by: Instant, writes_by: Instant) -> Drained {
        self.writes.close();
        self.background.close();
        let writes = tokio::time::timeout_at(writes_by, self.writes.wait())
            .await
            .is_ok();
        let deletes = tokio::time::timeout_at(deletes_by, self.background.wait())
            .await
            .is_ok();
        Drained { writes, deletes }
    }

    /// Whether the store answers (`/readyz`), and what an operator should know about this
    /// server's clock against the store's (a line, if anything).
    pub async fn ready(&self) -> Result<Option<String>, crate::index::store::StoreError> {
        self.index.store().ready().await?;
        Ok(self.index.clock_status().await.warning())
    }

    /// How live pages are kept up to date, as `/readyz` says it after "ready".
    pub fn live_mode(&self) -> &'static str {
        use crate::live::Mode;
        match self.live.as_ref().map(|l| l.mode()) {
            None => "",
            Some(Mode::Polling) => "; live: polling the store (no PICKUP_BUS)",
            Some(Mode::Bus) => "; live: facts on the bus",
            Some(Mode::BusDown) => "; live: polling the store (the bus is down)",
        }
    }

    /// An item id from a path or query, checked against this server's clock.
    pub fn item_id(&self, raw: &str) -> Result<ItemId> {
        Ok(self.index.item_id(raw)?)
    }

    /// A write went through this server: its live watchers, and the other servers', hear it.
    fn wrote(&self, fact: Option<Fact>) {
        if let (Some(live), Some(fact)) = (&self.live, fact) {
            live.wrote(fact);
        }
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
            this.wrote(Fact::record(&ws, &record, true, Some(version)));
            Ok(record)
        })
        .await
    }

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
            this.wrote(Fact::record(&ws, &updated.0, false, version));
            Ok(updated)
        })
        .await
    }

    pub async fn get(
        &self,
        who: &Authorized<Read>,
        id: &ItemId,
    ) -> Result<(ItemRecord, Option<String>)> {
        Ok(self.index.get(who.ws(), id).await?)
    }

    pub async fn remove(&self, who: &Authorized<Write>, id: ItemId) -> Result<()> {
        let this = self.clone();
        let (ws, user) = (who.ws().clone(), who.user().clone());
        self.to_the_end(async move {
            this.index.remove(&ws, &id, &user).await?;
            this.wrote(Some(Fact {
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
            this.wrote(Some(Fact {
                ws,
                change: Change::Dismissed { user, id },
            }));
            Ok(())
        })
        .await
    }

    /// The read path. The markers it found dead are deleted after the answer, in the background.
    /// `before`: the last id of the page the caller has; the answer is the next page.
    pub async fn recent_page(
        &self,
        who: &Authorized<Read>,
        filter: Filter,
        cap: Option<u32>,
        before: Option<&ItemId>,
    ) -> Result<RecentPage> {
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

/// The widget's door (its server functions, declared in `app` with the raw strings a browser
/// sends): checked here exactly as the REST routes' extractor checks them.
#[async_trait::async_trait]
impl app::service::Service for Pickup {
    async fn recent(
        &self,
        bearer: Option<&str>,
        ws: &str,
        filter: Filter,
        cap: Option<u32>,
        before: Option<&str>,
    ) -> Result<RecentPage, ApiError> {
        let who = self.auth.authorize::<Read>(bearer, ws).await?;
        let before = before.map(|id| self.item_id(id)).transpose()?;
        Ok(self.recent_page(&who, filter, cap, before.as_ref()).await?)
    }

    async fn dismiss(&self, bearer: Option<&str>, ws: &str, id: &str) -> Result<(), ApiError> {
        let who = self.auth.authorize::<Read>(bearer, ws).await?;
        let id = self.item_id(id)?;
        Ok(self.dismiss_item(&who, id).await?)
    }
}
