//! The whole server, built from one [`Config`]: [`app`] wires the index, the token checks, the
//! live watchers and the service into the router every door is on. `pickup serve` runs it
//! ([`serve`]: the listener, the janitor, signals, the drain); HTTP tests run the same router
//! in-process, with `tower::ServiceExt::oneshot`.

use crate::http::{router, Auth, ClaimMapping, ConnectionLimits, HttpConfig, Jwks};
use crate::index::Store;
use crate::index::{Index, Limits as IndexLimits, SystemClock};
use crate::live::LiveConfig;
use crate::service::Pickup;
use anyhow::{bail, Context};
use axum::Router;
use std::sync::Arc;
use std::time::Duration;

/// Everything a server is made of; `pickup serve`'s flags become one ([`crate::cli`]).
pub struct Config {
    /// `PICKUP_STORE`: where everything lives.
    pub store: String,
    pub limits: IndexLimits,
    /// Cards per page unless the caller asks otherwise.
    pub cap: u32,
    pub tokens: Tokens,
    pub http: HttpConfig,
    /// How long concurrent reads may share one listing (zero: never).
    pub read_cache: Duration,
    /// Live streams and how they are kept up to date; `None`: no live streams (widgets poll).
    pub live: Option<LiveConfig>,
    /// How often the server sweeps every workspace; zero: never.
    pub janitor_every: Duration,
    pub serve: ConnectionLimits,
}

/// Which tokens the server accepts: HS256 with `secret`, the identity provider's, or both.
pub struct Tokens {
    pub secret: Option<String>,
    pub issuer: Option<String>,
    pub audience: Option<String>,
    pub jwks: Option<JwksConfig>,
}

pub struct JwksConfig {
    pub url: String,
    pub min_refresh: Duration,
    /// Zero: only when a token names an unknown key id.
    pub refresh: Duration,
    pub mapping: ClaimMapping,
}

/// The server, wired: its router, and the service behind it (for the drain at shutdown).
pub struct App {
    pub router: Router,
    pub pickup: Pickup,
}

impl Config {
    /// The index this configuration describes (also what `pickup prune` sweeps with).
    pub fn index(&self) -> anyhow::Result<Index> {
        index(&self.store, self.limits, self.cap)
    }
}

pub fn index(store: &str, limits: IndexLimits, cap: u32) -> anyhow::Result<Index> {
    let store = Store::open(store)?;
    Ok(Index::new(store, limits, cap, Arc::new(SystemClock)).with_clock_check())
}

impl Tokens {
    /// HS256 with the secret alone: the one mode with no network at start-up.
    pub fn secret(&self) -> anyhow::Result<Auth> {
        let Some(secret) = &self.secret else {
            bail!("PICKUP_SECRET is not set: set it (or --secret) to at least 32 random bytes, e.g. `export PICKUP_SECRET=$(head -c 32 /dev/urandom | base64)`, or (for `serve`) set PICKUP_JWKS_URL to verify your identity provider's tokens");
        };
        Ok(Auth::new(secret.as_bytes())?
            .with_issuer_and_audience(self.issuer.clone(), self.audience.clone()))
    }

    /// The server's `Auth`. The JWKS is fetched before the server listens; when it cannot be,
    /// the server still starts if the secret works (and says so in the log), and refuses to
    /// start otherwise.
    async fn auth(&self) -> anyhow::Result<Auth> {
        let Some(idp) = &self.jwks else {
            return self.secret();
        };
        let base = match &self.secret {
            Some(_) => self.secret()?,
            None => Auth::from_jwks(None)
                .with_issuer_and_audience(self.issuer.clone(), self.audience.clone()),
        };
        let url = &idp.url;
        let jwks = Arc::new(Jwks::new(url, idp.min_refresh)?);
        match jwks.refresh().await {
            Ok(0) => tracing::warn!(%url, "the JWKS document has no key this server can use"),
            Ok(_) => {}
            Err(e) if base.has_secret() => tracing::error!(
                error = %e,
                "starting without the identity provider's keys: HS256 tokens work; the provider's are refused (401) until its key set can be fetched"
            ),
            Err(e) => bail!("PICKUP_JWKS_URL: {e}; without PICKUP_SECRET no token could be verified, so the server does not start"),
        }
        if !idp.refresh.is_zero() {
            tokio::spawn(jwks.clone().refresh_every(idp.refresh));
        }
        Ok(base.with_jwks(jwks).with_claims(idp.mapping.clone()))
    }
}

/// The whole server as a router: what `pickup serve` listens with, and what HTTP tests call.
pub async fn app(config: &Config) -> anyhow::Result<App> {
    let auth = config.tokens.auth().await?;
    let index = config.index()?.with_read_cache(config.read_cache);
    let mut pickup = Pickup::new(index, auth);
    if let Some(live) = &config.live {
        pickup = pickup.with_live(live.clone())?;
    }
    let router = router(pickup.clone(), &config.http);
    Ok(App { router, pickup })
}

/// Moves keys of the old layout until a move succeeds (after one failed at start).
async fn move_legacy_until_done(index: Arc<Index>) {
    loop {
        tokio::time::sleep(Duration::from_secs(10)).await;
        match index.store().move_legacy().await {
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
pub async fn serve(
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
        pickup.index().store().url()
    );
    if !config.janitor_every.is_zero() {
        tokio::spawn(crate::index::janitor_every(
            pickup.index().clone(),
            config.janitor_every,
        ));
    }
    let signal = stop_streams_on_signal(pickup.live().cloned());
    let deadline = crate::http::serve(listener, router, config.serve, signal).await;
    drain(&pickup, deadline, config.serve.grace).await;
    Ok(())
}

/// Before the first request: the store answers (or may heal), keys of the old layout are
/// moved, and a clock the store disagrees with is reported.
async fn open_store(index: &Arc<Index>) -> anyhow::Result<()> {
    // A store that refuses (a bucket that does not exist, credentials it does not accept)
    // will refuse every request: say so now, not as 503s later. One that does not answer may
    // heal: the server starts, and /readyz says how it stands.
    match index.store().ready().await {
        Err(e @ crate::index::StoreError::Refused(_)) => {
            bail!(
                "the store refused: {} ({e}); fix PICKUP_STORE or the store's credentials",
                e.refusal()
            )
        }
        Err(e) => {
            tracing::warn!(error = %e, "the store does not answer yet; /readyz says 503 until it does")
        }
        Ok(()) => {}
    }
    // A store an older Pickup wrote keeps its items.
    if let Err(e) = index.store().move_legacy().await {
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
