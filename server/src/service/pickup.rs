//! [`Pickup`]: the index, the token checks and the live watchers behind every door, and the
//! work it runs past an answer (writes to their end, deletes after a read) that shutdown
//! drains.

use crate::auth::Auth;
use crate::error::Result;
use crate::index::Index;
use crate::live::{Fact, Live, LiveConfig};
use std::sync::Arc;
use tokio::time::Instant;
use tokio_util::task::TaskTracker;

/// What [`Pickup::drain`] let finish: `true` when all of that kind did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drained {
    pub writes: bool,
    pub deletes: bool,
}

/// The service. Doors call its methods; its parts are reached by accessors only.
#[derive(Clone)]
pub struct Pickup {
    pub(super) index: Arc<Index>,
    pub(super) auth: Arc<Auth>,
    /// Deletes that run after an answer was sent; graceful shutdown waits for them.
    pub(super) background: TaskTracker,
    /// Writes, run to their end even if their caller leaves ([`Pickup::to_the_end`]); shutdown
    /// waits for them longer than for the deletes ([`Pickup::drain`]).
    pub(super) writes: TaskTracker,
    /// The watchers of live streams (`serve` turns them on).
    pub(super) live: Option<Arc<Live>>,
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

    /// The index every operation goes through.
    pub fn index(&self) -> &Arc<Index> {
        &self.index
    }

    /// Who the caller is, and may do what: what a door checks a token with.
    pub fn auth(&self) -> &Arc<Auth> {
        &self.auth
    }

    /// The live watchers, when this server serves live streams.
    pub fn live(&self) -> Option<&Arc<Live>> {
        self.live.as_ref()
    }

    /// Run a write to its end even if its caller stops waiting: the client hung up, or the
    /// request timed out (408). A write is several store requests (a register writes the record,
    /// the owner marker, then the workspace's marker), and one dropped half-way would leave an
    /// item that "Mine" shows and the workspace does not. Shutdown waits for it ([`Pickup::drain`]).
    pub(super) async fn to_the_end<T: Send + 'static>(
        &self,
        write: impl std::future::Future<Output = Result<T>> + Send + 'static,
    ) -> Result<T> {
        match self.writes.spawn(write).await {
            Ok(done) => done,
            // Not cancelled: nothing aborts these tasks, and the runtime outlives the server.
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }

    /// Waits for every write begun to end, and takes no more: a shutdown's first step, and how
    /// a test knows a write that outlived its caller is done.
    pub async fn finish_writes(&self) {
        self.writes.close();
        self.writes.wait().await;
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

    /// A write went through this server: its live watchers, and the other servers', hear it.
    pub(super) fn announce(&self, fact: Option<Fact>) {
        if let (Some(live), Some(fact)) = (&self.live, fact) {
            live.announce(fact);
        }
    }
}
