//! [`Auth`], the token checks: the secret, the identity provider's keys, what a token must
//! carry; and the verification of a bearer token against them (see the folder's doc).

use super::caller::Caller;
use super::claims::ClaimMapping;
use super::grant::{Authorized, Grant};
use super::jwks::{Jwks, Lookup};
use crate::error::{Error, Result};
use crate::index::Workspace;
use jsonwebtoken::{decode, decode_header, Algorithm, DecodingKey, EncodingKey, Validation};
use serde_json::{Map, Value};
use std::sync::Arc;

pub(super) const MIN_SECRET_BYTES: usize = 32;

#[derive(Clone)]
pub(super) struct Secret {
    pub(super) encoding: EncodingKey,
    decoding: DecodingKey,
}

/// How many seconds early a token's `nbf` may be met: the one leeway of the token checks.
const NBF_LEEWAY_SECS: u64 = 5;

#[derive(Clone)]
pub struct Auth {
    pub(super) secret: Option<Secret>,
    jwks: Option<Arc<Jwks>>,
    mapping: ClaimMapping,
    /// exp, sub, nbf (with its leeway), and iss/aud when configured; the algorithm is set per
    /// token.
    validation: Validation,
    pub(super) issuer: Option<String>,
    pub(super) audience: Option<String>,
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

    /// Told whenever the identity provider's key set is replaced (`None` without one): what
    /// a token was verified with may be gone.
    pub fn key_set_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.jwks.as_ref().map(|j| j.installs())
    }

    /// Tokens of the identity provider whose keys `jwks` holds, and no HS256 (unless made with
    /// [`Auth::new`] and [`Auth::with_jwks`]); `None`: no tokens at all.
    pub fn from_jwks(jwks: Option<Arc<Jwks>>) -> Self {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_required_spec_claims(&["exp", "sub"]);
        validation.validate_nbf = true;
        validation.validate_aud = false;
        // `nbf` has a few seconds' leeway (an issuer's clock a little ahead of this server's);
        // `exp` none: a token is refused from its `exp` on, at every door, as a live stream
        // ends then (jsonwebtoken refuses when `exp - reject < now - leeway`, so `exp <= now`).
        validation.leeway = NBF_LEEWAY_SECS;
        validation.reject_tokens_expiring_in_less_than = NBF_LEEWAY_SECS + 1;
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
}
