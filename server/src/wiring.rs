//! The whole server, built from one [`Config`]: [`app`] wires the index, the token checks, the
//! live watchers and the service into the router every door is on. [`App::serve`] runs it on a
//! listener (`crate::serve`: the accept loop, the janitor, the drain); `pickup serve` gives it
//! the process's signals, tests a shutdown of their own, or call the router in-process with
//! `tower::ServiceExt::oneshot`.

use crate::auth::{Auth, ClaimMapping, Jwks};
use crate::http::{router, HttpConfig};
use crate::index::{Clock, Index, Limits as IndexLimits};
use crate::live::LiveConfig;
use crate::serve::ConnectionLimits;
use crate::service::Pickup;
use anyhow::bail;
use axum::Router;
use std::sync::Arc;
use std::time::Duration;

/// Everything a server is made of; `pickup serve`'s flags become one ([`crate::cli`]).
pub struct Config {
    /// `PICKUP_STORE`: where everything lives.
    pub store: String,
    /// The store's backend options beyond the environment's (`AWS_*`, `GOOGLE_*`, `AZURE_*`
    /// variables), which these win over: a server of its own on a shared environment.
    pub store_options: Vec<(String, String)>,
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
    /// The clock the server tells the time by (`SystemClock`; a test's own, to play a server
    /// whose clock is off).
    pub clock: Arc<dyn Clock>,
    /// `pickup demo`: the demo workspace seeded and kept working at this pace.
    pub(crate) demo: Option<crate::demo::Pace>,
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

/// The server, wired: its router, the service behind it, and how it is served
/// ([`App::serve`]).
pub struct App {
    pub(crate) router: Router,
    pub(crate) pickup: Pickup,
    pub(crate) janitor_every: Duration,
    pub(crate) limits: ConnectionLimits,
    pub(crate) demo: Option<crate::demo::Pace>,
    pub(crate) site: std::path::PathBuf,
}

impl App {
    /// Every door, as one router: what a test calls in-process.
    pub fn router(&self) -> Router {
        self.router.clone()
    }

    /// Waits for every write begun to end: how a test knows a write that outlived its caller
    /// (a client that hung up, a request that timed out) is done.
    pub async fn finish_writes(&self) {
        self.pickup.finish_writes().await
    }
}

impl Config {
    /// The index this configuration describes (also what `pickup prune` sweeps with).
    pub fn index(&self) -> anyhow::Result<Index> {
        let (limits, cap, clock) = (self.limits, self.cap, self.clock.clone());
        let index = Index::open_with(&self.store, &self.store_options, limits, cap, clock)?;
        Ok(index.with_clock_check())
    }
}

pub(crate) fn index(
    store: &str,
    limits: IndexLimits,
    cap: u32,
    clock: Arc<dyn Clock>,
) -> anyhow::Result<Index> {
    Ok(Index::open(store, limits, cap, clock)?.with_clock_check())
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
    Ok(App {
        router,
        pickup,
        janitor_every: config.janitor_every,
        limits: config.serve,
        demo: config.demo,
        site: config.http.site.clone(),
    })
}
