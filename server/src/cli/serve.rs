//! `pickup serve`: its flags, and the server they describe, listening.

use super::idp::IdpArgs;
use super::parse::positive_duration;
use super::store::StoreArgs;
use crate::wiring::Config;
use clap::{Args, Parser};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Clone)]
pub struct ServeArgs {
    #[arg(long, env = "PICKUP_ADDR", default_value = "127.0.0.1:3000")]
    pub addr: String,
    /// The built widget (`make widget`'s dist/).
    #[arg(long, env = "PICKUP_SITE", default_value = "dist")]
    pub site: PathBuf,
    /// The HS256 signing secret, at least 32 bytes (this, PICKUP_JWKS_URL, or both).
    #[arg(long, env = "PICKUP_SECRET", hide_env_values = true)]
    pub secret: Option<String>,
    #[command(flatten)]
    pub idp: IdpArgs,
    /// Origins (comma-separated, scheme://host[:port]) whose pages may call this server from
    /// the browser. `*` is refused.
    #[arg(long, env = "PICKUP_ALLOWED_ORIGINS", default_value = "")]
    pub allowed_origins: String,
    /// Who may show the site's pages in a frame: CSP `frame-ancestors` sources.
    #[arg(long, env = "PICKUP_FRAME_ANCESTORS", default_value = "'self'")]
    pub frame_ancestors: String,
    /// If set, tokens must carry this `iss`.
    #[arg(long, env = "PICKUP_ISSUER")]
    pub issuer: Option<String>,
    /// If set, tokens must carry this `aud`.
    #[arg(long, env = "PICKUP_AUDIENCE")]
    pub audience: Option<String>,
    /// Time a client has to send a request's header (also how long an idle connection stays).
    #[arg(long, env = "PICKUP_HEADER_TIMEOUT", default_value = "10s", value_parser = positive_duration)]
    pub header_timeout: Duration,
    /// A request not answered within this gets 408.
    #[arg(long, env = "PICKUP_REQUEST_TIMEOUT", default_value = "30s", value_parser = positive_duration)]
    pub request_timeout: Duration,
    /// After SIGTERM, how long open connections may finish before they are dropped; the writes
    /// they started get as long again after that.
    #[arg(long, env = "PICKUP_SHUTDOWN_GRACE", default_value = "30s", value_parser = humantime::parse_duration)]
    pub shutdown_grace: Duration,
    /// Open connections at most; more wait to be accepted.
    #[arg(long, env = "PICKUP_MAX_CONNECTIONS", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_connections: u32,
    /// How long concurrent reads may share one listing and one read of each record (0s: never).
    #[arg(long, env = "PICKUP_READ_CACHE", default_value = "250ms", value_parser = humantime::parse_duration)]
    pub read_cache: Duration,
    /// How often live pages are computed again from each watcher's copy (stale heartbeats, a
    /// finished item's time running out), and how often the store is read while there is no
    /// bus (0s: no live streams; widgets poll).
    #[arg(long, env = "PICKUP_LIVE_EVERY", default_value = "1s", value_parser = humantime::parse_duration)]
    pub live_every: Duration,
    /// Live streams open at once, at most (each holds a connection; beyond it, widgets poll).
    /// Default: three quarters of PICKUP_MAX_CONNECTIONS, so the rest stays for other calls.
    #[arg(long, env = "PICKUP_MAX_STREAMS", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_streams: Option<u32>,
    /// Live streams of one workspace at most (default: half of PICKUP_MAX_STREAMS), so one
    /// workspace never holds the others out.
    #[arg(long, env = "PICKUP_MAX_STREAMS_PER_WORKSPACE", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_streams_per_workspace: Option<u32>,
    /// Live streams of one viewer in one workspace at most (their browsers share one stream
    /// across tabs; this bounds their devices), so one member never holds the others out.
    #[arg(long, env = "PICKUP_MAX_STREAMS_PER_VIEWER", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_streams_per_viewer: u32,
    /// Facts between servers: redis://HOST:PORT (Redis or Valkey pub/sub). With it, a write on
    /// one server reaches the viewers of every server without a store read, and one server
    /// reconciles each watched workspace for all. Without it, each server's watchers poll.
    #[arg(long, env = "PICKUP_BUS", hide_env_values = true)]
    pub bus: Option<String>,
    /// The key the servers seal their facts on the bus with, shared by every server of the
    /// deployment (at least 32 bytes). Default: derived from PICKUP_SECRET; set it when the
    /// servers have no PICKUP_SECRET (tokens only from an identity provider).
    #[arg(long, env = "PICKUP_BUS_KEY", hide_env_values = true)]
    pub bus_key: Option<String>,
    /// PEM file of the certificates to trust for a rediss:// PICKUP_BUS whose certificate no
    /// public authority signed (a private CA), instead of the system's.
    #[arg(long, env = "PICKUP_BUS_CA")]
    pub bus_ca: Option<PathBuf>,
    /// How often the store is listed to reconcile a watched workspace while the bus is up and
    /// its facts come.
    #[arg(long, env = "PICKUP_RECONCILE_EVERY", default_value = "30s", value_parser = positive_duration)]
    pub reconcile_every: Duration,
    /// The longest a watched workspace with no fact waits between reconciles: each quiet period
    /// doubles the next, from PICKUP_RECONCILE_EVERY up to this.
    #[arg(long, env = "PICKUP_RECONCILE_CEILING", default_value = "10m", value_parser = positive_duration)]
    pub reconcile_ceiling: Duration,
    /// Tests only: drop every n-th fact heard on the bus, as pub/sub may.
    #[arg(long, env = "PICKUP_TEST_DROP_FACTS", default_value_t = 0, hide = true)]
    pub test_drop_facts: u64,
    /// Serve Prometheus metrics at http://ADDR/metrics (a listener of its own, for operators
    /// only; off when unset).
    #[arg(long, env = "PICKUP_METRICS_ADDR")]
    pub metrics_addr: Option<String>,
    /// How often the server sweeps every workspace (0s: never).
    #[arg(long, env = "PICKUP_JANITOR_EVERY", default_value = "1h", value_parser = humantime::parse_duration)]
    pub janitor_every: Duration,
    #[command(flatten)]
    pub store: StoreArgs,
}

impl ServeArgs {
    /// `pickup serve`'s flags as a configuration, defaults and checks included: what HTTP
    /// tests build their in-process server from (`["--store", "memory://", …]`).
    pub fn parse_config<I, T>(args: I) -> anyhow::Result<Config>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        #[derive(Parser)]
        struct Serve {
            #[command(flatten)]
            args: ServeArgs,
        }
        let argv = std::iter::once("serve".into()).chain(args.into_iter().map(Into::into));
        Serve::try_parse_from(argv)?.args.config()
    }
}

/// `pickup serve` (and `pickup demo`, with `demo`): the app prepared, then served on
/// `--addr` until SIGTERM or Ctrl-C.
pub(super) async fn command(
    args: ServeArgs,
    demo: Option<crate::demo::Pace>,
    console: &crate::producer::Console,
) -> anyhow::Result<()> {
    if let Some(addr) = &args.metrics_addr {
        crate::metrics::listen(addr).await?;
    }
    let mut config = args.config()?;
    config.demo = demo;
    let app = crate::app(&config).await?;
    app.prepare().await?;
    let listener = crate::serve::bind(&args.addr).await?;
    let local = listener.local_addr()?;
    if demo.is_some() {
        // The token travels in the fragment, which the browser never sends to a server.
        console.print(format_args!(
            "Pickup demo: open http://{local}/#ws=demo&token={}",
            app.demo_token()
        ));
    }
    console.print(format_args!(
        "pickup listening on http://{local} (store {})",
        app.store_url()
    ));
    app.serve(listener, crate::serve::shutdown_signal()).await;
    Ok(())
}
