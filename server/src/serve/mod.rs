//! `pickup serve` (and `pickup demo`): the app ([`crate::wiring::app`]) on a listener until
//! SIGTERM or Ctrl-C, then what is in flight finished within the shutdown grace.
//!
//! - this module: the store opened (and an old layout moved) before the first request, the
//!   demo's seed, the wait for the bus, the janitor, the signal and the drain;
//! - `accept`: the accept loop (header-read timeout, connection cap, graceful shutdown).

mod accept;

pub(crate) use accept::ConnectionLimits;

use crate::index::{Index, Limits as IndexLimits};
use crate::service::Pickup;
use crate::wiring::{app, App, Config};
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

/// How long `serve` waits for the bus before it listens: long enough for a reachable Redis
/// (subscribed, and this server's first beat heard back: milliseconds), short enough that a
/// server whose bus is down starts all the same, polling.
const BUS_AT_START: Duration = Duration::from_secs(5);

/// `pickup serve` (and `pickup demo`): listens on `addr` until SIGTERM or Ctrl-C, then finishes
/// what is in flight within the shutdown grace.
pub(crate) async fn run(
    config: Config,
    addr: &str,
    demo: Option<crate::demo::Pace>,
) -> anyhow::Result<()> {
    let App { router, pickup } = app(&config).await?;
    open_store(pickup.index()).await?;
    if let Some(pace) = demo {
        start_demo(&pickup, pace, &config.limits).await?;
    }
    if let Some(live) = pickup.live() {
        if !live.on_the_bus(BUS_AT_START).await {
            tracing::warn!(
                "the bus is not up {BUS_AT_START:?} after start: listening anyway; live watchers poll the store until it is"
            );
        }
    }
    let listener = bind(addr).await?;
    let local = listener.local_addr()?;
    if !config.http.site.join("index.html").exists() {
        tracing::warn!(site = %config.http.site.display(), "no index.html in the site directory: run `make widget`");
    }
    if demo.is_some() {
        let token = crate::demo::token(pickup.auth());
        // The token travels in the fragment, which the browser never sends to a server.
        println!("Pickup demo: open http://{local}/#ws=demo&token={token}");
    }
    println!(
        "pickup listening on http://{local} (store {})",
        pickup.index().store_url()
    );
    if !config.janitor_every.is_zero() {
        tokio::spawn(pickup.index().clone().sweep_every(config.janitor_every));
    }
    let signal = stop_streams_on_signal(pickup.live().cloned());
    let deadline = accept::connections(listener, router, config.serve, signal).await;
    drain(&pickup, deadline, config.serve.grace).await;
    Ok(())
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
async fn start_demo(
    pickup: &Pickup,
    pace: crate::demo::Pace,
    limits: &IndexLimits,
) -> anyhow::Result<()> {
    if !pickup.auth().has_secret() {
        bail!("pickup demo mints its own token: set PICKUP_SECRET");
    }
    let pace = pace.check(limits)?;
    crate::demo::seed(pickup.index())
        .await
        .context("seeding the demo workspace")?;
    tokio::spawn(crate::demo::keep_alive(pickup.index().clone(), pace).await);
    Ok(())
}

async fn bind(addr: &str) -> anyhow::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr).await.map_err(|e| match e.kind() {
        std::io::ErrorKind::AddrInUse => anyhow::anyhow!("{addr} is already in use: stop the other process or choose another with --addr / PICKUP_ADDR"),
        _ => anyhow::anyhow!("cannot listen on {addr}: {e}"),
    })
}

/// SIGTERM or Ctrl-C, then the live streams ended.
async fn stop_streams_on_signal(live: Option<Arc<crate::live::Live>>) {
    shutdown_signal().await;
    // Streams never finish by themselves: end them, so clients reconnect elsewhere and
    // the graceful shutdown is not held up until its deadline.
    if let Some(live) = live {
        live.stop();
    }
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

async fn shutdown_signal() {
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
