//! Tokens, of two kinds, told apart by the header's `alg`:
//!
//! - **HS256**, signed with the server's secret (`PICKUP_SECRET`): Pickup's own tokens, as
//!   `pickup token` mints them. Their claims are fixed: `sub`, `name`, `ws` (workspaces),
//!   `scope` (`read` or `read write`), `exp`.
//! - **RS256, ES256, EdDSA** (and whatever else a key of the identity provider's JWKS allows,
//!   see `jwks`), verified against `PICKUP_JWKS_URL`. Which claims hold the workspaces,
//!   the display name and the scope is configurable ([`ClaimMapping`]); the defaults read the
//!   same claims as Pickup's own tokens.
//!
//! Both kinds may be accepted at once. HS* is never checked against a JWKS key, and an
//! asymmetric `alg` never against the secret, so neither can stand in for the other.
//! For both: `exp` and `sub` are required (a token is refused from its `exp` on, with no
//! leeway, at every door), `nbf` honoured when present (5 s leeway), `iss` and
//! `aud` required and checked when the server is configured with an issuer or an audience (and
//! `aud` is not checked otherwise).
//!
//! **Verification is async** only because a token naming a `kid` the cached key set lacks
//! waits, once and rate-limited, for the key set to be fetched again (rotation: the first
//! token signed with a new key is accepted, not refused until some background refresh). Every
//! other token is checked against the cached keys without touching the network.
//!
//! **Claims to a caller.** Workspaces: the values of the workspace claim (an array of strings,
//! or one string of space-separated values); with a prefix, only the values that start with it
//! count, the prefix stripped. Name: the name claim, else `preferred_username`, else `sub`;
//! the name becomes an item's owner name, so it follows the rule of every displayed name
//! ([`app::contract::stored_text`]) and a token whose name breaks it is refused. Write access:
//! the scope claim (a space-separated string, or an array) contains `write`. A token without
//! a scope claim may read only: membership comes from the workspace claim, and writing is
//! granted only when asked for explicitly (an identity provider's default access token says
//! nothing about Pickup).
//!
//! The parts: `claims` (what a token's claims say), `caller` (who the caller is and may do),
//! `grant` (what a route needs, and the proof it was checked), `verify` ([`Auth`] and the
//! checks), `mint` (Pickup's own tokens), `jwks` (the identity provider's keys).

mod caller;
mod claims;
mod grant;
mod jwks;
mod mint;
mod verify;

pub(crate) use claims::ClaimMapping;
pub(crate) use grant::{Authorized, Grant, Read, Write};
pub(crate) use jwks::Jwks;
pub(crate) use verify::Auth;

#[cfg(test)]
mod tests;
