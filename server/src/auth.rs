//! Tokens: HS256 JWTs signed with the server's secret (the `jsonwebtoken` crate).
//! Claims: `sub`, `name`, `ws` (workspaces), `scope` (`read` or `read write`), `exp` (required).

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
}

/// A verified caller.
#[derive(Debug, Clone)]
pub struct Caller {
    pub user: UserId,
    pub name: String,
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
        validation.leeway = 5;
        Ok(Auth {
            encoding: EncodingKey::from_secret(secret).expect("an HMAC key of any length is valid"),
            decoding: DecodingKey::from_secret(secret).expect("an HMAC key of any length is valid"),
            validation,
        })
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
        Ok(Caller {
            name: c
                .name
                .filter(|n| !n.trim().is_empty())
                .unwrap_or_else(|| user.to_string()),
            user,
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
}
