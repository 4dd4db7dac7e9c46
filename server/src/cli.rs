//! The `pickup` command line (clap): every flag also reads its `PICKUP_*` environment variable.

use crate::http::{ClaimMapping, HttpConfig};
use crate::index::Workspace;
use crate::index::{Clock, Index, Limits, SystemClock};
use crate::live::{BusConfig, BusKey, LiveConfig, StreamLimits};
use crate::producer::{Client, Item, Timing};
use crate::wiring::{Config, JwksConfig, Tokens};
use anyhow::Context;
use app::contract::{NewItem, Status};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "pickup",
    version,
    about = "Pick up where you left off: a shared recent-items widget and its server"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// How the log on standard error is written: text, or one JSON object per line.
    #[arg(
        long,
        env = "PICKUP_LOG_FORMAT",
        value_enum,
        default_value_t,
        global = true
    )]
    pub log_format: crate::logs::LogFormat,
}

#[derive(Subcommand)]
pub enum Command {
    /// Serve the widget, its server functions and the REST API.
    Serve(ServeArgs),
    /// Print a token (the JWT alone) for scripts and tests.
    Token(TokenArgs),
    /// Sweep workspaces: delete expired, superseded and dead markers and orphan dismissals.
    Prune(PruneArgs),
    /// Seed a demo workspace, keep a few of its items working, print a link that opens it
    /// signed in, and serve.
    Demo(DemoArgs),
    /// Run a command as an item: registered, kept alive, finished with the command's outcome.
    Run(RunArgs),
    /// Register, change, read or remove one item (for scripts).
    Item(ItemArgs),
}

#[derive(Args, Clone)]
pub struct StoreArgs {
    /// Where everything lives: file://PATH, memory://, s3://, gs://, az://
    #[arg(long, env = "PICKUP_STORE", default_value = "file://./data")]
    pub store: String,
    /// Time to live of a marker, by its name alone.
    #[arg(long, env = "PICKUP_TTL", default_value = "7d", value_parser = humantime::parse_duration)]
    pub ttl: Duration,
    /// How long a marker may wait for its record before it counts as dead.
    #[arg(long, env = "PICKUP_GRACE", default_value = "60s", value_parser = humantime::parse_duration)]
    pub grace: Duration,
    /// How long finished items stay on the list.
    #[arg(long, env = "PICKUP_KEEP_FINISHED", default_value = "24h", value_parser = humantime::parse_duration)]
    pub keep_finished: Duration,
    /// A running item whose heartbeat is older than this is shown as stalled.
    #[arg(long, env = "PICKUP_STALE_AFTER", default_value = "15m", value_parser = humantime::parse_duration)]
    pub stale_after: Duration,
    /// How far servers' clocks may disagree. Ids dated later than now plus this are refused.
    #[arg(long, env = "PICKUP_MAX_SKEW", default_value = "2m", value_parser = humantime::parse_duration)]
    pub max_skew: Duration,
    /// Cards per page unless the caller asks otherwise (at most 50).
    #[arg(long, env = "PICKUP_CAP", default_value_t = app::contract::DEFAULT_CAP, value_parser = clap::value_parser!(u32).range(i64::from(app::contract::MIN_CAP)..=i64::from(app::contract::MAX_CAP)))]
    pub cap: u32,
}

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
    /// How often the store is listed to reconcile a watched workspace while the bus is up.
    #[arg(long, env = "PICKUP_RECONCILE_EVERY", default_value = "30s", value_parser = positive_duration)]
    pub reconcile_every: Duration,
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

/// Tokens from the host's identity provider, verified with the keys of its JWKS document.
#[derive(Args, Clone)]
pub struct IdpArgs {
    /// The identity provider's JWKS document (e.g. Keycloak's
    /// https://HOST/realms/REALM/protocol/openid-connect/certs): RS256, ES256 and EdDSA tokens
    /// signed with its keys are accepted, beside HS256 ones when PICKUP_SECRET is set.
    #[arg(long, env = "PICKUP_JWKS_URL")]
    pub jwks_url: Option<String>,
    /// A token naming a key id the cached key set lacks fetches the document again, at most
    /// once per this.
    #[arg(long, env = "PICKUP_JWKS_MIN_REFRESH", default_value = "30s", value_parser = humantime::parse_duration)]
    pub jwks_min_refresh: Duration,
    /// How often the document is fetched again anyway, so a key removed from it stops working
    /// (0s: only when a token names an unknown key id).
    #[arg(long, env = "PICKUP_JWKS_REFRESH", default_value = "10m", value_parser = humantime::parse_duration)]
    pub jwks_refresh: Duration,
    /// The claim of an identity provider's token that lists the caller's workspaces (an array,
    /// or a space-separated string; a dotted name reaches into objects, e.g. realm_access.roles).
    #[arg(long, env = "PICKUP_WS_CLAIM", default_value = "ws")]
    pub ws_claim: String,
    /// Only values of the workspace claim with this prefix count, the prefix stripped (e.g.
    /// `/pickup/` for Keycloak groups under a `pickup` group).
    #[arg(long, env = "PICKUP_WS_PREFIX")]
    pub ws_prefix: Option<String>,
    /// The claim holding the display name (then `preferred_username`, then `sub`).
    #[arg(long, env = "PICKUP_NAME_CLAIM", default_value = "name")]
    pub name_claim: String,
    /// The claim holding the scopes (`scope`: a space-separated string; `scp`: an array or a
    /// string); `write` among them grants write access. No such claim: read only.
    #[arg(long, env = "PICKUP_SCOPE_CLAIM", default_value = "scope")]
    pub scope_claim: String,
}

impl IdpArgs {
    pub fn mapping(&self) -> ClaimMapping {
        ClaimMapping {
            workspaces: self.ws_claim.clone(),
            workspace_prefix: self.ws_prefix.clone().filter(|p| !p.is_empty()),
            name: self.name_claim.clone(),
            scope: self.scope_claim.clone(),
        }
    }
}

#[derive(Args)]
pub struct TokenArgs {
    #[arg(long)]
    pub sub: String,
    #[arg(long)]
    pub name: Option<String>,
    /// Workspaces, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    pub ws: Vec<String>,
    /// Grant `read write` (default: `read`).
    #[arg(long)]
    pub write: bool,
    #[arg(long, default_value = "1h", value_parser = humantime::parse_duration)]
    pub ttl: Duration,
    #[arg(long, env = "PICKUP_SECRET", hide_env_values = true)]
    pub secret: Option<String>,
    /// The token's `iss` (a server with PICKUP_ISSUER requires it).
    #[arg(long, env = "PICKUP_ISSUER")]
    pub iss: Option<String>,
    /// The token's `aud` (a server with PICKUP_AUDIENCE requires it).
    #[arg(long, env = "PICKUP_AUDIENCE")]
    pub aud: Option<String>,
}

/// Where producers send items, and as whom.
#[derive(Args, Clone)]
pub struct ServerArgs {
    /// The Pickup server, e.g. https://pickup.example.com.
    #[arg(long = "server", env = "PICKUP_URL")]
    pub server: String,
    /// A token with write access to the workspace (`pickup token --write`).
    #[arg(long, env = "PICKUP_TOKEN", hide_env_values = true)]
    pub token: String,
}

impl ServerArgs {
    fn client(&self) -> anyhow::Result<Client> {
        Ok(Client::new(&self.server, &self.token)?)
    }
}

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub item: NewItemArgs,
    /// How often the item is told the command is still running.
    #[arg(long, default_value = "60s", value_parser = positive_duration)]
    pub heartbeat: Duration,
    /// At most one progress update per this.
    #[arg(long, default_value = "5s", value_parser = positive_duration)]
    pub progress_every: Duration,
    /// After the command ended, how long to keep trying to finish the item.
    #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
    pub finish_timeout: Duration,
    /// Leave Pickup's credentials (PICKUP_TOKEN, PICKUP_SECRET, PICKUP_STORE) in the command's
    /// environment. Without it the command gets none of them: it can report progress (its
    /// output, PICKUP_PROGRESS_FILE) but not write as the wrapper's token.
    #[arg(long)]
    pub pass_credentials: bool,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, num_args = 1.., value_name = "COMMAND")]
    pub command: Vec<std::ffi::OsString>,
}

/// A new item, as `pickup run` and `pickup item start` name it.
#[derive(Args)]
pub struct NewItemArgs {
    /// The workspace.
    #[arg(long)]
    pub ws: String,
    /// The item's key: runs of one key are one card.
    #[arg(long)]
    pub key: String,
    /// What the card says (at most 200 characters).
    #[arg(long)]
    pub title: String,
    /// Where the card links to: http(s) or a path starting with '/'.
    #[arg(long)]
    pub url: Option<String>,
}

#[derive(Args)]
pub struct ItemArgs {
    #[command(subcommand)]
    pub command: ItemCommand,
}

#[derive(Subcommand)]
pub enum ItemCommand {
    /// Register an item; prints its id.
    Start(ItemStartArgs),
    /// Change an item (only what is given); prints its record as JSON.
    Update(ItemUpdateArgs),
    /// Give an item its final status; prints its record as JSON.
    Finish(ItemFinishArgs),
    /// Print an item's record as JSON.
    Get(ItemIdArgs),
    /// Remove an item.
    Rm(ItemIdArgs),
}

#[derive(Args)]
pub struct ItemIdArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    /// The workspace.
    #[arg(long)]
    pub ws: String,
    /// The id `pickup item start` printed.
    pub id: String,
}

#[derive(Args)]
pub struct ItemStartArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub item: NewItemArgs,
    /// queued, running, succeeded, failed or cancelled.
    #[arg(long, default_value = "running", value_parser = status)]
    pub status: Status,
    /// A number from 0 to 1.
    #[arg(long)]
    pub progress: Option<f64>,
}

#[derive(Args)]
pub struct ItemUpdateArgs {
    #[command(flatten)]
    pub id: ItemIdArgs,
    /// A new title.
    #[arg(long)]
    pub title: Option<String>,
    /// Where the card links to: http(s) or a path starting with '/'.
    #[arg(long)]
    pub url: Option<String>,
    /// queued, running, succeeded, failed or cancelled.
    #[arg(long, value_parser = status)]
    pub status: Option<Status>,
    /// A number from 0 to 1.
    #[arg(long)]
    pub progress: Option<f64>,
}

#[derive(Args)]
pub struct ItemFinishArgs {
    #[command(flatten)]
    pub id: ItemIdArgs,
    /// succeeded, failed or cancelled.
    #[arg(long, default_value = "succeeded", value_parser = finished_status)]
    pub status: Status,
    /// A new title.
    #[arg(long)]
    pub title: Option<String>,
    /// A number from 0 to 1.
    #[arg(long)]
    pub progress: Option<f64>,
}

fn status(s: &str) -> Result<Status, String> {
    Status::ALL
        .into_iter()
        .find(|st| st.as_str() == s)
        .ok_or_else(|| "one of queued, running, succeeded, failed, cancelled".to_string())
}

fn finished_status(s: &str) -> Result<Status, String> {
    status(s)
        .ok()
        .filter(|st| st.is_finished())
        .ok_or_else(|| "one of succeeded, failed, cancelled".to_string())
}

#[derive(Args)]
pub struct PruneArgs {
    #[arg(long, conflicts_with = "all", required_unless_present = "all")]
    pub ws: Option<String>,
    #[arg(long)]
    pub all: bool,
    /// Print what would be deleted and why; delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

fn positive_duration(s: &str) -> Result<Duration, String> {
    match humantime::parse_duration(s) {
        Ok(d) if d.is_zero() => Err("must be more than 0s".into()),
        Ok(d) => Ok(d),
        Err(e) => Err(e.to_string()),
    }
}

/// Runs the subcommand. `pickup run` exits with its command's status; the others succeed or
/// fail.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let done = match cli.command {
        Command::Run(args) => return run_command(args).await.map(ExitCode::from),
        Command::Item(args) => item(args.command).await,
        Command::Serve(args) => serve(args, None).await,
        Command::Demo(args) => {
            let pace = crate::demo::Pace {
                every: args.every,
                run_for: args.run_for,
            };
            serve(args.serve, Some(pace)).await
        }
        Command::Token(t) => {
            for ws in &t.ws {
                Workspace::parse(ws)?;
            }
            crate::index::UserId::parse(&t.sub)?;
            let tokens = Tokens {
                secret: t.secret.clone(),
                issuer: t.iss.clone(),
                audience: t.aud.clone(),
                jwks: None,
            };
            let token = tokens.secret()?.mint(
                &t.sub,
                t.name.as_deref(),
                &t.ws,
                t.write,
                t.ttl,
                SystemClock.now_ms() / 1000,
            );
            println!("{token}");
            Ok(())
        }
        Command::Prune(p) => prune(p).await,
    };
    done.map(|()| ExitCode::SUCCESS)
}

/// `pickup run`: names are checked before the command starts (a typo is an error, not an
/// unreported run); the server is not needed to start it.
async fn run_command(args: RunArgs) -> anyhow::Result<u8> {
    let NewItemArgs {
        ws,
        key,
        title,
        url,
    } = args.item;
    Workspace::parse(&ws)?;
    crate::index::SubKey::parse(&key)?;
    let title = crate::index::check_title(&title)?;
    let url = crate::index::check_url(url.as_deref())?;
    let item = Item {
        ws,
        key,
        title,
        url,
    };
    let timing = Timing {
        heartbeat: args.heartbeat,
        progress_every: args.progress_every,
        finish_timeout: args.finish_timeout,
    };
    crate::producer::run(
        args.server.client()?,
        item,
        timing,
        args.command,
        args.pass_credentials,
    )
    .await
}

async fn item(command: ItemCommand) -> anyhow::Result<()> {
    use crate::producer::item::{self, Changes};
    let print = |record: app::contract::ItemRecord| -> anyhow::Result<()> {
        println!("{}", serde_json::to_string(&record)?);
        Ok(())
    };
    match command {
        ItemCommand::Start(a) => {
            let NewItemArgs {
                ws,
                key,
                title,
                url,
            } = a.item;
            let new = NewItem {
                key,
                title,
                url,
                status: Some(a.status),
                progress: a.progress,
            };
            println!("{}", item::start(&a.server.client()?, &ws, &new).await?);
            Ok(())
        }
        ItemCommand::Update(a) => {
            let changes = Changes {
                title: a.title,
                url: a.url,
                status: a.status,
                progress: a.progress,
            };
            let c = a.id.server.client()?;
            print(item::update(&c, &a.id.ws, &a.id.id, changes).await?)
        }
        ItemCommand::Finish(a) => {
            let changes = Changes {
                title: a.title,
                url: None,
                status: Some(a.status),
                progress: a.progress,
            };
            let c = a.id.server.client()?;
            print(item::update(&c, &a.id.ws, &a.id.id, changes).await?)
        }
        ItemCommand::Get(a) => print(item::get(&a.server.client()?, &a.ws, &a.id).await?),
        ItemCommand::Rm(a) => item::remove(&a.server.client()?, &a.ws, &a.id).await,
    }
}

async fn prune(p: PruneArgs) -> anyhow::Result<()> {
    let index = p.store.index()?;
    if !p.dry_run {
        let moved = index
            .store()
            .move_legacy()
            .await
            .context("moving keys of the old layout")?;
        if moved.moved > 0 {
            println!("moved {} keys of the old layout to ws/{{ws}}/", moved.moved);
        }
    }
    let targets = match &p.ws {
        Some(ws) => vec![Workspace::parse(ws)?],
        None => crate::index::workspaces(&index)
            .await
            .context("listing workspaces")?,
    };
    let verb = if p.dry_run { "would delete" } else { "deleted" };
    let mut total = 0;
    for ws in targets {
        let sweep = crate::index::sweep(&index, &ws, p.dry_run)
            .await
            .with_context(|| format!("sweeping {ws}"))?;
        let counts = if p.dry_run {
            sweep.planned()
        } else {
            sweep.deleted.clone()
        };
        println!(
            "{ws}: listed {}; {verb} {}; {} unreadable (kept)",
            per_kind(&sweep.listed),
            per_kind(&counts),
            sweep.unknown
        );
        for (key, reason) in &sweep.deletes {
            println!("  {verb} {key}: {reason}");
        }
        if sweep.backfilled > 0 {
            let verb = if p.dry_run { "would write" } else { "wrote" };
            println!("  {verb} {} missing owner markers", sweep.backfilled);
        }
        total += counts.values().sum::<usize>();
        if sweep.failed > 0 {
            println!("  {} deletes failed; run again later", sweep.failed);
        }
        if sweep.held > 0 {
            println!(
                "  {} deletes by age held: this machine's clock disagrees with the store's by more than PICKUP_MAX_SKEW",
                sweep.held
            );
        }
    }
    println!("{verb} {total} keys");
    Ok(())
}

/// `3 markers, 3 records, 0 dismissals`.
fn per_kind(counts: &std::collections::BTreeMap<crate::index::store::KeyKind, usize>) -> String {
    use crate::index::store::KeyKind;
    [
        KeyKind::Marker,
        KeyKind::Record,
        KeyKind::Dismissal,
        KeyKind::OwnerMarker,
    ]
    .iter()
    .map(|k| format!("{} {}", counts.get(k).copied().unwrap_or(0), k.plural()))
    .collect::<Vec<_>>()
    .join(", ")
}

impl StoreArgs {
    fn limits(&self) -> Limits {
        Limits {
            ttl_ms: self.ttl.as_millis() as u64,
            grace_ms: self.grace.as_millis() as u64,
            keep_finished_ms: self.keep_finished.as_millis() as u64,
            stale_after_ms: self.stale_after.as_millis() as u64,
            max_skew_ms: self.max_skew.as_millis() as u64,
        }
    }

    pub fn index(&self) -> anyhow::Result<Index> {
        crate::wiring::index(&self.store, self.limits(), self.cap)
    }
}

impl ServeArgs {
    /// The server these flags describe, refused when its settings can lose data.
    pub fn config(&self) -> anyhow::Result<Config> {
        self.check_loses_nothing()?;
        let tokens = Tokens {
            secret: self.secret.clone(),
            issuer: self.issuer.clone(),
            audience: self.audience.clone(),
            jwks: self.idp.jwks_url.clone().map(|url| JwksConfig {
                url,
                min_refresh: self.idp.jwks_min_refresh,
                refresh: self.idp.jwks_refresh,
                mapping: self.idp.mapping(),
            }),
        };
        Ok(Config {
            store: self.store.store.clone(),
            limits: self.store.limits(),
            cap: self.store.cap,
            tokens,
            http: HttpConfig {
                site: self.site.clone(),
                allowed_origins: crate::http::allowed_origins(&self.allowed_origins)?,
                frame_ancestors: crate::http::frame_ancestors(&self.frame_ancestors)?,
                request_timeout: self.request_timeout,
            },
            read_cache: self.read_cache,
            live: (!self.live_every.is_zero())
                .then(|| {
                    let server = self
                        .max_streams
                        .unwrap_or(self.max_connections / 4 * 3)
                        .max(1) as usize;
                    Ok::<_, anyhow::Error>(LiveConfig {
                        every: self.live_every,
                        reconcile_every: self.reconcile_every,
                        bus: self.bus_config()?,
                        limits: StreamLimits {
                            server,
                            workspace: self
                                .max_streams_per_workspace
                                .map_or((server / 2).max(1), |n| n as usize),
                            viewer: self.max_streams_per_viewer as usize,
                        },
                    })
                })
                .transpose()?,
            janitor_every: self.janitor_every,
            serve: crate::http::Limits {
                header_read: self.header_timeout,
                max_connections: self.max_connections as usize,
                grace: self.shutdown_grace,
            },
        })
    }

    /// `PICKUP_BUS` with its key and certificates; refused without a key to seal facts with.
    fn bus_config(&self) -> anyhow::Result<Option<BusConfig>> {
        let Some(url) = &self.bus else {
            return Ok(None);
        };
        let shown = crate::live::redacted(url);
        if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
            anyhow::bail!("PICKUP_BUS {shown}: use redis://HOST:PORT or rediss://HOST:PORT (TLS)");
        }
        let key = match (&self.bus_key, &self.secret) {
            (Some(key), _) if key.len() < 32 => {
                anyhow::bail!("PICKUP_BUS_KEY must be at least 32 bytes (it is {})", key.len())
            }
            (Some(key), _) => BusKey::derive(key.as_bytes()),
            (None, Some(secret)) => BusKey::derive(secret.as_bytes()),
            (None, None) => anyhow::bail!(
                "PICKUP_BUS needs a key the servers share, to seal their facts so that nothing else on Redis can publish one: set PICKUP_SECRET, or PICKUP_BUS_KEY (at least 32 bytes, the same on every server)"
            ),
        };
        let ca = match &self.bus_ca {
            Some(path) => Some(
                std::fs::read(path)
                    .map_err(|e| anyhow::anyhow!("PICKUP_BUS_CA {}: {e}", path.display()))?,
            ),
            None => None,
        };
        Ok(Some(BusConfig {
            url: url.clone(),
            key,
            ca,
            drop_every: self.test_drop_facts,
        }))
    }

    /// A registration writes its record, then its markers, within the request timeout; the
    /// janitor deletes a record without a marker once it is older than the grace period plus
    /// the clock skew. A request timeout longer than that lets a slow registration be answered
    /// 201 after its record was deleted as an orphan.
    fn check_loses_nothing(&self) -> anyhow::Result<()> {
        let (grace, skew) = (self.store.grace, self.store.max_skew);
        if self.request_timeout > grace + skew {
            anyhow::bail!(
                "these settings can lose registrations: PICKUP_REQUEST_TIMEOUT ({}) is longer than PICKUP_GRACE ({}) + PICKUP_MAX_SKEW ({}), so a registration slower than {} could be answered 201 after another server's janitor deleted its record as an orphan. Raise PICKUP_GRACE (or PICKUP_MAX_SKEW) to at least {} in total, or lower PICKUP_REQUEST_TIMEOUT to at most {}",
                humantime::format_duration(self.request_timeout),
                humantime::format_duration(grace),
                humantime::format_duration(skew),
                humantime::format_duration(grace + skew),
                humantime::format_duration(self.request_timeout),
                humantime::format_duration(grace + skew),
            );
        }
        Ok(())
    }

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

#[derive(Args, Clone)]
pub struct DemoArgs {
    #[command(flatten)]
    pub serve: ServeArgs,
    /// How often the demo's running items beat and move on (under half of PICKUP_STALE_AFTER).
    #[arg(long = "demo-every", env = "PICKUP_DEMO_EVERY", default_value = "3s", value_parser = humantime::parse_duration)]
    pub every: Duration,
    /// How long one of the demo's runs takes from start to done.
    #[arg(long = "demo-run-for", env = "PICKUP_DEMO_RUN_FOR", default_value = "90s", value_parser = humantime::parse_duration)]
    pub run_for: Duration,
}

async fn serve(args: ServeArgs, demo: Option<crate::demo::Pace>) -> anyhow::Result<()> {
    if let Some(addr) = &args.metrics_addr {
        crate::metrics::serve(addr).await?;
    }
    crate::wiring::serve(args.config()?, &args.addr, demo).await
}
