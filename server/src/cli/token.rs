//! `pickup token`: a token of Pickup's own, for scripts and tests.

use crate::index::{Clock, SystemClock, Workspace};
use crate::producer::Console;
use crate::wiring::Tokens;
use clap::Args;
use std::time::Duration;

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

/// `pickup token`: the names are checked before anything is signed, so a typo is an error,
/// not a token no server accepts.
pub(super) fn token(t: TokenArgs, console: &Console) -> anyhow::Result<()> {
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
    console.print(format_args!("{token}"));
    Ok(())
}
