//! Tokens: HS256 JWTs signed with the server's secret (the `jsonwebtoken` crate).
//! Claims: `sub`, `name`, `ws` (workspaces), `scope` (`read` or `read write`), `exp` (required);
//! `nbf` (honoured when present); `iss` and `aud` (required when the server is configured with
//! an issuer or an audience). The `name` becomes an item's owner name, so it follows the rule
//! of every displayed name ([`crate::record::check_name`]).

use crate::error::{Error, Result};
use crate::names::{UserId, Workspace};
use app::model::Owner;
use jsonwebtoken::{decode, encode, Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use std::time::Duration;

pub const MIN_SECRET_BYTES: usize = 32;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Claims {
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

    pub fn owner(&self) -> Owner {
        Owner {
            sub: self.user.to_string(),
            name: self.name.clone(),
        }
    }
}

#[derive(Clone)]
pub struct Auth {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    issuer: Option<String>,
    audience: Option<String>,
}

#[derive(Debug, thiserror::Error)]
#[error("PICKUP_SECRET must be at least {MIN_SECRET_BYTES} bytes (it is {0}); generate one with: head -c 32 /dev/urandom | base64")]
pub struct ShortSecret(usize);

impl Auth {
    pub fn new(secret: &[u8]) -> Result<Self, ShortSecret> {
        if secret.len() < MIN_SECRET_BYTES {
            return Err(ShortSecret(secret.len()));
        }
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_required_spec_claims(&["exp", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = 5;
        Ok(Auth {
            encoding: EncodingKey::from_secret(secret).expect("an HMAC key of any length is valid"),
            decoding: DecodingKey::from_secret(secret).expect("an HMAC key of any length is valid"),
            validation,
            issuer: None,
            audience: None,
        })
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
            required.push("aud");
        }
        self.validation.set_required_spec_claims(&required);
        self.issuer = issuer;
        self.audience = audience;
        self
    }

    /// Verify the `Authorization: Bearer` token (401 on anything wrong with it).
    pub fn verify(&self, bearer: Option<&str>) -> Result<Caller> {
        let token = bearer.ok_or_else(|| {
            Error::Unauthenticated(
                "send Authorization: Bearer <token> (mint one with `pickup token`)".into(),
            )
        })?;
        let data = decode::<Claims>(token, &self.decoding, &self.validation).map_err(|e| {
            Error::Unauthenticated(format!("the token was refused ({e}); get a new one"))
        })?;
        let c = data.claims;
        let user = UserId::parse(&c.sub)
            .map_err(|e| Error::Unauthenticated(format!("the token's subject is invalid: {e}")))?;
        let can_write = c.scope.split_whitespace().any(|s| s == "write");
        let name = match c.name.filter(|n| !n.trim().is_empty()) {
            None => user.to_string(),
            Some(n) => crate::record::check_name(&n).map_err(|e| {
                Error::Unauthenticated(format!("the token's name was refused ({e}); get a new one"))
            })?,
        };
        Ok(Caller {
            name,
            user,
            expires_at: c.exp,
            workspaces: c.ws,
            can_write,
        })
    }

    pub fn mint(
        &self,
        sub: &str,
        name: Option<&str>,
        ws: &[String],
        write: bool,
        ttl: Duration,
        now_secs: u64,
    ) -> String {
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
        encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .expect("HS256 encoding does not fail")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let c = auth.verify(Some(&t)).unwrap();
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
                matches!(auth.verify(bad), Err(Error::Unauthenticated(_))),
                "{bad:?}"
            );
        }
        assert!(Auth::new(b"short").is_err());
    }

    fn signed(auth: &Auth, claims: &Claims) -> String {
        encode(&Header::new(Algorithm::HS256), claims, &auth.encoding).unwrap()
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
        let err = auth.verify(Some(&signed(&auth, &later))).unwrap_err();
        assert!(err.to_string().contains("ImmatureSignature"), "{err}");
        let now_valid = Claims {
            nbf: Some(now() - 1),
            ..claims(None)
        };
        assert!(auth.verify(Some(&signed(&auth, &now_valid))).is_ok());
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
        assert!(strict.verify(Some(&good)).is_ok());
        for (iss, aud) in [
            (None, None),
            (Some("https://idp.test"), None),
            (None, Some("pickup")),
            (Some("https://other.test"), Some("pickup")),
            (Some("https://idp.test"), Some("other")),
        ] {
            let t = signed(&strict, &with(iss, aud));
            assert!(
                matches!(strict.verify(Some(&t)), Err(Error::Unauthenticated(_))),
                "{iss:?} {aud:?}"
            );
        }
        // Unconfigured, no iss is needed; and what `mint` makes is what `verify` takes.
        assert!(plain.verify(Some(&signed(&plain, &claims(None)))).is_ok());
        let minted = strict.mint(
            "alice",
            None,
            &["acme".into()],
            false,
            Duration::from_secs(60),
            now(),
        );
        assert!(strict.verify(Some(&minted)).is_ok());
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
            let err = auth.verify(Some(&t)).unwrap_err();
            assert!(
                matches!(&err, Error::Unauthenticated(m) if m.contains("name")),
                "{bad:?}: {err}"
            );
        }
        let t = signed(&auth, &claims(Some(" Ali ce ")));
        assert_eq!(auth.verify(Some(&t)).unwrap().name, "Ali ce");
        let t = signed(&auth, &claims(Some("  ")));
        assert_eq!(auth.verify(Some(&t)).unwrap().name, "alice");
    }
}
