//! Tokens of Pickup's own, as `pickup token` and `pickup demo` make them.

use super::claims::TokenClaims;
use super::verify::Auth;
use jsonwebtoken::{encode, Algorithm, Header};
use std::time::Duration;

impl Auth {
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
        let claims = TokenClaims {
            sub: sub.to_string(),
            name: name.map(str::to_string),
            ws: ws.to_vec(),
            scope: if write { "read write" } else { "read" }.to_string(),
            exp: now_secs + ttl.as_secs(),
            iat: Some(now_secs),
            nbf: None,
            iss: self.issuer.clone(),
            aud: self.audience.clone(),
        };
        encode(&Header::new(Algorithm::HS256), &claims, &secret.encoding)
            .expect("HS256 encoding does not fail")
    }
}
