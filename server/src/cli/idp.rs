//! The identity provider's flags: where its keys are, and which claims say what.

use crate::auth::ClaimMapping;
use clap::Args;
use std::time::Duration;

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
