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
//! For both: `exp` and `sub` are required, `nbf` honoured when present (5 s leeway), `iss` and
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
//! ([`crate::index::check_name`]) and a token whose name breaks it is refused. Write access:
//! the scope claim (a space-separated string, or an array) contains `write`. A token without
//! a scope claim may read only: membership comes from the workspace claim, and writing is
//! granted only when asked for explicitly (an identity provider's default access token says
//! nothing about Pickup).

use crate::error::{Error, Result};
mod jwks;

use crate::index::{Producer, UserId, Workspace};
use jsonwebtoken::{
    decode, decode_header, encode, Algorithm, DecodingKey, EncodingKey, Header, Validation,
};
pub use jwks::Jwks;
use jwks::Lookup;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;

pub(super) const MIN_SECRET_BYTES: usize = 32;

/// The claims of Pickup's own (HS256) tokens.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Claims {
    pub sub: String,
    #[serde(default)]
    pub name: Option<String>,
    pub ws: Vec<String>,
    pub scope: String,
    pub exp: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nbf: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iss: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aud: Option<String>,
}

/// Which claims of an identity provider's token say what (`PICKUP_WS_CLAIM`,
/// `PICKUP_WS_PREFIX`, `PICKUP_NAME_CLAIM`, `PICKUP_SCOPE_CLAIM`). A claim name is looked up
/// as it is first; if there is no such claim and the name has dots, as a path into nested
/// objects (`realm_access.roles`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimMapping {
    pub workspaces: String,
    pub workspace_prefix: Option<String>,
    pub name: String,
    pub scope: String,
}

impl Default for ClaimMapping {
    /// The claims of Pickup's own tokens.
    fn default() -> Self {
        ClaimMapping {
            workspaces: "ws".into(),
            workspace_prefix: None,
            name: "name".into(),
            scope: "scope".into(),
        }
    }
}

impl ClaimMapping {
    /// The caller these (verified) claims describe.
    fn caller(&self, claims: &Map<String, Value>) -> Result<Caller> {
        let sub = claims
            .get("sub")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let user = UserId::parse(sub)
            .map_err(|e| Error::Unauthenticated(format!("the token's subject is invalid: {e}")))?;
        let expires_at = match claims.get("exp") {
            Some(Value::Number(n)) => n
                .as_u64()
                .or_else(|| n.as_f64().map(|f| f.max(0.0) as u64))
                .unwrap_or(0),
            _ => 0,
        };
        let workspaces = values(claim(claims, &self.workspaces))
            .into_iter()
            .filter_map(|v| match &self.workspace_prefix {
                None => Some(v),
                Some(p) => v.strip_prefix(p.as_str()).map(str::to_string),
            })
            .collect();
        let can_write = values(claim(claims, &self.scope))
            .iter()
            .any(|s| s == "write");
        let chosen = [self.name.as_str(), "preferred_username"]
            .into_iter()
            .filter_map(|c| claim(claims, c).and_then(Value::as_str))
            .find(|n| !n.trim().is_empty());
        let name = match chosen {
            None => user.to_string(),
            Some(n) => crate::index::check_name(n).map_err(|e| {
                Error::Unauthenticated(format!("the token's name was refused ({e}); get a new one"))
            })?,
        };
        Ok(Caller {
            name,
            user,
            expires_at,
            workspaces,
            can_write,
        })
    }
}

/// The claim `name`: a top-level claim of that name, else the dotted path into nested objects.
fn claim<'a>(claims: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    if let Some(v) = claims.get(name) {
        return Some(v);
    }
    let mut parts = name.split('.');
    let mut at = claims.get(parts.next()?)?;
    for part in parts {
        at = at.as_object()?.get(part)?;
    }
    Some(at)
}

/// A claim's values: an array's strings, or a string's space-separated words.
fn values(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// A verified caller.
#[derive(Debug, Clone)]
pub struct Caller {
    pub user: UserId,
    pub name: String,
    /// When the token stops being valid (its `exp`, seconds since the epoch): a live stream
    /// opened with it ends then.
    pub expires_at: u64,
    workspaces: Vec<String>,
    can_write: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

impl Caller {
    /// Membership of `ws` with the access asked for. The answer is the same 403 whether or not
    /// the workspace exists, so a non-member learns nothing.
    pub fn check(&self, ws: &Workspace, access: Access) -> Result<()> {
        if !self.workspaces.iter().any(|w| w == ws.as_str()) {
            return Err(Error::Forbidden("access"));
        }
        if access == Access::Write && !self.can_write {
            return Err(Error::Forbidden("write access (scope \"read write\")"));
        }
        Ok(())
    }

    /// The caller as the producer of the items it registers.
    pub fn producer(&self) -> Producer {
        Producer {
            user: self.user.clone(),
            name: self.name.clone(),
        }
    }
}

/// What a route needs of its caller: [`Read`] or [`Write`] access to the workspace.
pub trait Grant: Send + Sync + 'static {
    const ACCESS: Access;
}

/// Read access: membership of the workspace.
pub struct Read;
/// Write access: membership and the `write` scope.
pub struct Write;

impl Grant for Read {
    const ACCESS: Access = Access::Read;
}
impl Grant for Write {
    const ACCESS: Access = Access::Write;
}

/// Proof that a token was verified and grants `A` on one workspace. Only [`Auth::authorize`]
/// makes one, so a service method that takes it cannot be reached unchecked.
pub struct Authorized<A> {
    caller: Caller,
    ws: Workspace,
    access: std::marker::PhantomData<A>,
}

impl<A> Clone for Authorized<A> {
    fn clone(&self) -> Self {
        Authorized {
            caller: self.caller.clone(),
            ws: self.ws.clone(),
            access: std::marker::PhantomData,
        }
    }
}

impl<A> Authorized<A> {
    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    pub fn ws(&self) -> &Workspace {
        &self.ws
    }

    pub fn user(&self) -> &UserId {
        &self.caller.user
    }
}

impl From<Authorized<Write>> for Authorized<Read> {
    fn from(w: Authorized<Write>) -> Self {
        Authorized {
            caller: w.caller,
            ws: w.ws,
            access: std::marker::PhantomData,
        }
    }
}

#[derive(Clone)]
struct Secret {
    encoding: EncodingKey,
    decoding: DecodingKey,
}

#[derive(Clone)]
pub struct Auth {
    secret: Option<Secret>,
    jwks: Option<Arc<Jwks>>,
    mapping: ClaimMapping,
    /// exp, sub, nbf, leeway, and iss/aud when configured; the algorithm is set per token.
    validation: Validation,
    issuer: Option<String>,
    audience: Option<String>,
}

#[derive(Debug, thiserror::Error)]
#[error("PICKUP_SECRET must be at least {MIN_SECRET_BYTES} bytes (it is {0}); generate one with: head -c 32 /dev/urandom | base64")]
pub struct ShortSecret(usize);

fn refused(e: jsonwebtoken::errors::Error) -> Error {
    Error::Unauthenticated(format!("the token was refused ({e}); get a new one"))
}

impl Auth {
    /// HS256 tokens signed with `secret`.
    pub fn new(secret: &[u8]) -> Result<Self, ShortSecret> {
        if secret.len() < MIN_SECRET_BYTES {
            return Err(ShortSecret(secret.len()));
        }
        Ok(Auth {
            secret: Some(Secret {
                encoding: EncodingKey::from_secret(secret)
                    .expect("an HMAC key of any length is valid"),
                decoding: DecodingKey::from_secret(secret)
                    .expect("an HMAC key of any length is valid"),
            }),
            ..Auth::from_jwks(None)
        })
    }

    /// Tokens of the identity provider whose keys `jwks` holds, and no HS256 (unless made with
    /// [`Auth::new`] and [`Auth::with_jwks`]); `None`: no tokens at all.
    /// Told whenever the identity provider's key set is replaced (`None` without one): what
    /// a token was verified with may be gone.
    pub fn key_set_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.jwks.as_ref().map(|j| j.installs())
    }

    pub fn from_jwks(jwks: Option<Arc<Jwks>>) -> Self {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_required_spec_claims(&["exp", "sub"]);
        validation.validate_nbf = true;
        validation.validate_aud = false;
        validation.leeway = 5;
        Auth {
            secret: None,
            jwks,
            mapping: ClaimMapping::default(),
            validation,
            issuer: None,
            audience: None,
        }
    }

    /// Also accept the identity provider's tokens, verified with the keys of `jwks`.
    pub fn with_jwks(mut self, jwks: Arc<Jwks>) -> Self {
        self.jwks = Some(jwks);
        self
    }

    /// Read the identity provider's tokens with this mapping (Pickup's own keep theirs).
    pub fn with_claims(mut self, mapping: ClaimMapping) -> Self {
        self.mapping = mapping;
        self
    }

    pub fn jwks(&self) -> Option<&Arc<Jwks>> {
        self.jwks.as_ref()
    }

    pub fn has_secret(&self) -> bool {
        self.secret.is_some()
    }

    /// Require `iss` and/or `aud` (each when given), and put them in the tokens [`Auth::mint`]
    /// makes.
    pub fn with_issuer_and_audience(
        mut self,
        issuer: Option<String>,
        audience: Option<String>,
    ) -> Self {
        let mut required = vec!["exp", "sub"];
        if let Some(iss) = &issuer {
            self.validation.set_issuer(&[iss]);
            required.push("iss");
        }
        if let Some(aud) = &audience {
            self.validation.set_audience(&[aud]);
            self.validation.validate_aud = true;
            required.push("aud");
        }
        self.validation.set_required_spec_claims(&required);
        self.issuer = issuer;
        self.audience = audience;
        self
    }

    /// Verify the `Authorization: Bearer` token (401 on anything wrong with it). Waits on the
    /// network only for a token whose key the cached JWKS lacks (see the module's doc).
    pub async fn verify(&self, bearer: Option<&str>) -> Result<Caller> {
        let token = bearer.ok_or_else(|| {
            Error::Unauthenticated(
                "send Authorization: Bearer <token> (mint one with `pickup token`)".into(),
            )
        })?;
        let header = decode_header(token).map_err(refused)?;
        match header.alg {
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => self.verify_secret(token),
            alg => self.verify_jwks(token, header.kid.as_deref(), alg).await,
        }
    }

    /// The token, then the workspace's name, then membership with `A`'s access: what every
    /// call checks before it touches the store.
    pub async fn authorize<A: Grant>(
        &self,
        bearer: Option<&str>,
        ws: &str,
    ) -> Result<Authorized<A>> {
        let caller = self.verify(bearer).await?;
        let ws = Workspace::parse(ws)?;
        caller.check(&ws, A::ACCESS)?;
        Ok(Authorized {
            caller,
            ws,
            access: std::marker::PhantomData,
        })
    }

    /// An HS256 token, checked with the secret (never with a JWKS key).
    pub fn verify_secret(&self, token: &str) -> Result<Caller> {
        let Some(secret) = &self.secret else {
            return Err(Error::Unauthenticated(
                "this server does not accept HS256 tokens (it has no PICKUP_SECRET): send a token from the identity provider".into(),
            ));
        };
        let data = decode::<Map<String, Value>>(token, &secret.decoding, &self.validation)
            .map_err(refused)?;
        ClaimMapping::default().caller(&data.claims)
    }

    async fn verify_jwks(&self, token: &str, kid: Option<&str>, alg: Algorithm) -> Result<Caller> {
        let Some(jwks) = &self.jwks else {
            return Err(Error::Unauthenticated(format!(
                "this server accepts only HS256 tokens signed with its secret, not {alg:?} (PICKUP_JWKS_URL is not set)"
            )));
        };
        let (mut found, generation) = jwks.lookup(kid, alg);
        if matches!(found, Lookup::Unknown) {
            jwks.refresh_for_unknown(generation).await;
            found = jwks.lookup(kid, alg).0;
        }
        let keys = match found {
            Lookup::Found(keys) => keys,
            Lookup::Refused(why) => {
                return Err(Error::Unauthenticated(format!(
                    "the token was refused ({why}); get a new one"
                )))
            }
            Lookup::Unknown => return Err(Error::Unauthenticated(jwks.why_missing(kid))),
        };
        let mut validation = self.validation.clone();
        let mut last = None;
        for key in keys {
            // The key's one algorithm, not the header's: jsonwebtoken refuses a header that
            // names another (a second check behind `lookup`'s).
            validation.algorithms = vec![key.alg];
            match decode::<Map<String, Value>>(token, &key.key, &validation) {
                Ok(data) => return self.mapping.caller(&data.claims),
                Err(e) => last = Some(e),
            }
        }
        Err(refused(last.expect("Found holds at least one key")))
    }

    /// A token of Pickup's own, signed with the secret.
    ///
    /// # Panics
    /// When this `Auth` has no secret (made with [`Auth::from_jwks`]).
    pub fn mint(
        &self,
        sub: &str,
        name: Option<&str>,
        ws: &[String],
        write: bool,
        ttl: Duration,
        now_secs: u64,
    ) -> String {
        let secret = self
            .secret
            .as_ref()
            .expect("minting needs PICKUP_SECRET (Auth::new)");
        let claims = Claims {
            sub: sub.to_string(),
            name: name.map(str::to_string),
            ws: ws.to_vec(),
            scope: if write { "read write" } else { "read" }.to_string(),
            exp: now_secs + ttl.as_secs(),
            nbf: None,
            iss: self.issuer.clone(),
            aud: self.audience.clone(),
        };
        encode(&Header::new(Algorithm::HS256), &claims, &secret.encoding)
            .expect("HS256 encoding does not fail")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// HS256 needs no network: verify on this thread.
    fn v(auth: &Auth, bearer: Option<&str>) -> Result<Caller> {
        futures::executor::block_on(auth.verify(bearer))
    }

    fn now() -> u64 {
        chrono::Utc::now().timestamp() as u64
    }

    #[test]
    fn round_trip_and_membership() {
        let auth = Auth::new(&[7u8; 32]).unwrap();
        let t = auth.mint(
            "alice",
            Some("Alice"),
            &["acme".into()],
            false,
            Duration::from_secs(60),
            now(),
        );
        let c = v(&auth, Some(&t)).unwrap();
        assert_eq!(c.name, "Alice");
        let acme = Workspace::parse("acme").unwrap();
        assert!(c.check(&acme, Access::Read).is_ok());
        assert!(matches!(
            c.check(&acme, Access::Write),
            Err(Error::Forbidden(_))
        ));
        assert!(matches!(
            c.check(&Workspace::parse("beta").unwrap(), Access::Read),
            Err(Error::Forbidden(_))
        ));
    }

    #[test]
    fn refuses_bad_tokens() {
        let auth = Auth::new(&[7u8; 32]).unwrap();
        let other = Auth::new(&[8u8; 32]).unwrap();
        let forged = other.mint(
            "alice",
            None,
            &["acme".into()],
            true,
            Duration::from_secs(60),
            now(),
        );
        let expired = auth.mint(
            "alice",
            None,
            &["acme".into()],
            true,
            Duration::from_secs(0),
            now() - 3600,
        );
        for bad in [
            None,
            Some("junk"),
            Some(forged.as_str()),
            Some(expired.as_str()),
        ] {
            assert!(
                matches!(v(&auth, bad), Err(Error::Unauthenticated(_))),
                "{bad:?}"
            );
        }
        assert!(Auth::new(b"short").is_err());
    }

    fn signed(auth: &Auth, claims: &Claims) -> String {
        encode(
            &Header::new(Algorithm::HS256),
            claims,
            &auth.secret.as_ref().unwrap().encoding,
        )
        .unwrap()
    }

    fn claims(name: Option<&str>) -> Claims {
        Claims {
            sub: "alice".into(),
            name: name.map(str::to_string),
            ws: vec!["acme".into()],
            scope: "read".into(),
            exp: now() + 600,
            nbf: None,
            iss: None,
            aud: None,
        }
    }

    #[test]
    fn not_before_is_honoured() {
        let auth = Auth::new(&[7u8; 32]).unwrap();
        let later = Claims {
            nbf: Some(now() + 300),
            ..claims(None)
        };
        let err = v(&auth, Some(&signed(&auth, &later))).unwrap_err();
        assert!(err.to_string().contains("ImmatureSignature"), "{err}");
        let now_valid = Claims {
            nbf: Some(now() - 1),
            ..claims(None)
        };
        assert!(v(&auth, Some(&signed(&auth, &now_valid))).is_ok());
    }

    #[test]
    fn issuer_and_audience_are_required_when_configured() {
        let plain = Auth::new(&[7u8; 32]).unwrap();
        let strict = Auth::new(&[7u8; 32])
            .unwrap()
            .with_issuer_and_audience(Some("https://idp.test".into()), Some("pickup".into()));
        let with = |iss: Option<&str>, aud: Option<&str>| Claims {
            iss: iss.map(str::to_string),
            aud: aud.map(str::to_string),
            ..claims(None)
        };
        let good = signed(&strict, &with(Some("https://idp.test"), Some("pickup")));
        assert!(v(&strict, Some(&good)).is_ok());
        for (iss, aud) in [
            (None, None),
            (Some("https://idp.test"), None),
            (None, Some("pickup")),
            (Some("https://other.test"), Some("pickup")),
            (Some("https://idp.test"), Some("other")),
        ] {
            let t = signed(&strict, &with(iss, aud));
            assert!(
                matches!(v(&strict, Some(&t)), Err(Error::Unauthenticated(_))),
                "{iss:?} {aud:?}"
            );
        }
        // Unconfigured, no iss is needed; and what `mint` makes is what `verify` takes.
        assert!(v(&plain, Some(&signed(&plain, &claims(None)))).is_ok());
        let minted = strict.mint(
            "alice",
            None,
            &["acme".into()],
            false,
            Duration::from_secs(60),
            now(),
        );
        assert!(v(&strict, Some(&minted)).is_ok());
    }

    #[test]
    fn a_name_that_would_display_wrongly_is_refused() {
        let auth = Auth::new(&[7u8; 32]).unwrap();
        for bad in [
            "Alice\u{202E}nimda".to_string(),
            "Bob\u{2067}x".to_string(),
            "Eve\u{0007}".to_string(),
            "n".repeat(201),
        ] {
            let t = signed(&auth, &claims(Some(&bad)));
            let err = v(&auth, Some(&t)).unwrap_err();
            assert!(
                matches!(&err, Error::Unauthenticated(m) if m.contains("name")),
                "{bad:?}: {err}"
            );
        }
        let t = signed(&auth, &claims(Some(" Ali ce ")));
        assert_eq!(v(&auth, Some(&t)).unwrap().name, "Ali ce");
        let t = signed(&auth, &claims(Some("  ")));
        assert_eq!(v(&auth, Some(&t)).unwrap().name, "alice");
    }

    fn mapped(mapping: &ClaimMapping, claims: serde_json::Value) -> Result<Caller> {
        mapping.caller(claims.as_object().unwrap())
    }

    #[test]
    fn claim_mapping() {
        let acme = Workspace::parse("acme").unwrap();
        let beta = Workspace::parse("beta").unwrap();
        // Defaults: Pickup's own claims; no scope claim reads only.
        let c = mapped(
            &ClaimMapping::default(),
            serde_json::json!({"sub": "alice", "exp": 1, "ws": "acme beta"}),
        )
        .unwrap();
        assert!(c.check(&beta, Access::Read).is_ok());
        assert!(c.check(&acme, Access::Write).is_err());
        assert_eq!(c.name, "alice");
        // Keycloak-style: groups as full paths under /pickup/, scp as an array, nested roles.
        let kc = ClaimMapping {
            workspaces: "groups".into(),
            workspace_prefix: Some("/pickup/".into()),
            name: "name".into(),
            scope: "scp".into(),
        };
        let c = mapped(
            &kc,
            serde_json::json!({"sub": "0b6f-uuid", "exp": 1, "preferred_username": "bob",
                "groups": ["/pickup/acme", "/admins", "/other/pickup/beta", "beta"],
                "scp": ["read", "write"]}),
        )
        .unwrap();
        assert_eq!(c.name, "bob");
        assert!(c.check(&acme, Access::Write).is_ok());
        assert!(c.check(&beta, Access::Read).is_err());
        let roles = ClaimMapping {
            workspaces: "realm_access.roles".into(),
            workspace_prefix: Some("pickup:".into()),
            ..ClaimMapping::default()
        };
        let c = mapped(
            &roles,
            serde_json::json!({"sub": "carol", "exp": 1, "name": " ",
                "realm_access": {"roles": ["pickup:acme", "offline_access"]},
                "scope": "openid profile"}),
        )
        .unwrap();
        assert_eq!(c.name, "carol");
        assert!(c.check(&acme, Access::Read).is_ok());
        assert!(c.check(&acme, Access::Write).is_err());
        // A bad display name is refused wherever it comes from.
        let err = mapped(
            &kc,
            serde_json::json!({"sub": "d", "exp": 1, "preferred_username": "x\u{202E}y"}),
        )
        .unwrap_err();
        assert!(matches!(err, Error::Unauthenticated(m) if m.contains("name")));
    }

    #[test]
    fn without_a_secret_hs256_is_refused_and_an_asymmetric_alg_needs_a_jwks() {
        let auth = Auth::new(&[7u8; 32]).unwrap();
        let t = auth.mint(
            "alice",
            None,
            &["acme".into()],
            false,
            Duration::from_secs(60),
            now(),
        );
        let err = v(&Auth::from_jwks(None), Some(&t)).unwrap_err();
        assert!(err.to_string().contains("PICKUP_SECRET"), "{err}");
        // An RS256 header on a server without a JWKS: refused before any key is looked at.
        let header = base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            br#"{"alg":"RS256","kid":"k"}"#,
        );
        let body = t.split('.').nth(1).unwrap();
        let err = v(&auth, Some(&format!("{header}.{body}.c2ln"))).unwrap_err();
        assert!(err.to_string().contains("PICKUP_JWKS_URL"), "{err}");
        // alg none does not parse.
        let none = base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            br#"{"alg":"none"}"#,
        );
        assert!(v(&auth, Some(&format!("{none}.{body}."))).is_err());
    }
}
