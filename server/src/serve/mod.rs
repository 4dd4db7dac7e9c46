//! A wired app ([`crate::wiring::app`]) served on a listener until it is told to stop (`pickup
//! serve`: SIGTERM or Ctrl-C), then what is in flight finished within the shutdown grace.
//!
//! - this module: [`App::prepare`] (the store opened and an old layout moved before the first
//!   request, the demo's seed, the wait for the bus) and [`App::serve`] (the janitor, the
//!   accept loop, the drain);
//! - `accept`: the accept loop (header-read timeout, connection cap, graceful shutdown).

mod accept;

pub(crate) use accept::ConnectionLimits;

use crate::index::Index;
use crate::service::Pickup;
use crate::wiring::App;
use anyhow::{bail, Context};
use std::sync::Arc;
use std::time::Duration;

/// Moves keys of the old layout until a move succeeds (after one failed at start).
async fn move_legacy_until_done(index: Arc<Index>) {
    loop {
        tokio::time::sleep(Duration::from_secs(10)).await;
        match index.move_legacy().await {
            Ok(_) => return,
            Err(e) => {
                tracing::warn!(error = %e, "could not move keys of the old layout; trying again in 10 s")
            }
        }
    }
}

/// How long a server waits for the bus before it listens: long enough for a reachable Redis
/// (subscribed, and this server's first beat heard back: milliseconds), short enough that a
/// server whose bus is down starts all the same, polling.
const BUS_AT_START: Duration = Duration::from_secs(5);

impl App {
    /// Before the first request: the store answers (one that refuses is an error; one that
    /// does not answer may heal, and `/readyz` says how it stands), keys of the old layout are
    /// moved, a clock the store disagrees with is reported, the demo workspace is seeded and at
    /// work (`pickup demo`), and the bus is waited for (at most [`BUS_AT_START`]).
    pub async fn prepare(&self) -> anyhow::Result<()> {
        open_store(self.pickup.index()).await?;
        if let Some(pace) = self.demo {
            start_demo(&self.pickup, pace).await?;
        }
        if let Some(live) = self.pickup.live() {
            if !live.on_the_bus(BUS_AT_START).await {
                tracing::warn!(
                    "the bus is not up {BUS_AT_START:?} after start: listening anyway; live watchers poll the store until it is"
                );
            }
        }
        if !self.site.join("index.html").exists() {
            tracing::warn!(site = %self.site.display(), "no index.html in the site directory: run `make widget`");
        }
        Ok(())
    }

    /// Serves `listener` until `shutdown` resolves (`pickup serve`: SIGTERM or Ctrl-C), with
    /// the janitor at work meanwhile; then ends the live streams, finishes what is in flight
    /// within the shutdown grace, and returns.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()>,
    ) {
        let App {
            router,
            pickup,
            janitor_every,
            limits,
            ..
        } = self;
        let janitor = (!janitor_every.is_zero())
            .then(|| tokio::spawn(pickup.index().clone().sweep_every(janitor_every)));
        let live = pickup.live().cloned();
        let stopping = async move {
            shutdown.await;
            // Streams never finish by themselves: end them, so clients reconnect elsewhere
            // and the graceful shutdown is not held up until its deadline.
            if let Some(live) = live {
                live.stop();
            }
        };
        let deadline = accept::connections(listener, router, limits, stopping).await;
        if let Some(janitor) = janitor {
            janitor.abort();
        }
        drain(&pickup, deadline, limits.grace).await;
    }

    /// The demo user's token (`pickup demo` prints a link that carries it).
    pub(crate) fn demo_token(&self) -> String {
        crate::demo::token(self.pickup.auth())
    }

    /// The URL the store was opened from, for the start-up line.
    pub(crate) fn store_url(&self) -> &str {
        self.pickup.index().store_url()
    }
}

/// Before the first request: the store answers (or may heal), keys of the old layout are
/// moved, and a clock the store disagrees with is reported.
async fn open_store(index: &Arc<Index>) -> anyhow::Result<()> {
    // A store that refuses (a bucket that does not exist, credentials it does not accept)
    // will refuse every request: say so now, not as 503s later. One that does not answer may
    // heal: the server starts, and /readyz says how it stands.
    match index.ready().await {
        Err(e) if e.refusal().is_some() => {
            bail!(
                "the store refused: {} ({e}); fix PICKUP_STORE or the store's credentials",
                e.refusal().unwrap_or_default()
            )
        }
        Err(e) => {
            tracing::warn!(error = %e, "the store does not answer yet; /readyz says 503 until it does")
        }
        Ok(()) => {}
    }
    // A store an older Pickup wrote keeps its items.
    if let Err(e) = index.move_legacy().await {
        tracing::warn!(error = %e, "could not move keys of the old layout; trying again every 10 s");
        tokio::spawn(move_legacy_until_done(index.clone()));
    }
    if let Some(clock) = index.clock_status().await.warning() {
        tracing::error!("{clock}");
    }
    Ok(())
}

/// `pickup demo`: the demo workspace seeded and its workers at work before anyone is answered.
async fn start_demo(pickup: &Pickup, pace: crate::demo::Pace) -> anyhow::Result<()> {
    if !pickup.auth().has_secret() {
        bail!("pickup demo mints its own token: set PICKUP_SECRET");
    }
    let pace = pace.check(&pickup.index().limits())?;
    crate::demo::seed(pickup.index())
        .await
        .context("seeding the demo workspace")?;
    tokio::spawn(crate::demo::keep_alive(pickup.index().clone(), pace).await);
    Ok(())
}

pub(crate) async fn bind(addr: &str) -> anyhow::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr).await.map_err(|e| match e.kind() {
        std::io::ErrorKind::AddrInUse => anyhow::anyhow!("{addr} is already in use: stop the other process or choose another with --addr / PICKUP_ADDR"),
        _ => anyhow::anyhow!("cannot listen on {addr}: {e}"),
    })
}

/// Requests are done (or dropped) at `deadline`. The writes they started get `grace` of their
/// own after it; the deletes they scheduled only what is left of that deadline.
async fn drain(pickup: &Pickup, deadline: tokio::time::Instant, grace: Duration) {
    let drained = pickup.drain(deadline, deadline + grace).await;
    if !drained.writes {
        tracing::error!(
            "a write was still running twice PICKUP_SHUTDOWN_GRACE after the signal: it is cut, \
             and its item may be listed in \"Mine\" only until it is written again"
        );
    }
    if !drained.deletes {
        tracing::warn!("shutdown grace is over: leaving pending deletes to a later read");
    }
}

/// SIGTERM or Ctrl-C: how `pickup serve` is told to stop.
pub(crate) async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    tracing::info!("shutting down: finishing in-flight requests and pending deletes (at most PICKUP_SHUTDOWN_GRACE)");
}
