//! Tokens minted, verified and mapped to callers, end to end within the module.

use super::caller::{Access, Caller};
use super::claims::TokenClaims;
use super::*;
use crate::error::{Error, Result};
use crate::index::Workspace;
use jsonwebtoken::{encode, Algorithm, Header};
use std::time::Duration;

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

fn signed(auth: &Auth, claims: &TokenClaims) -> String {
    encode(
        &Header::new(Algorithm::HS256),
        claims,
        &auth.secret.as_ref().unwrap().encoding,
    )
    .unwrap()
}

fn claims(name: Option<&str>) -> TokenClaims {
    TokenClaims {
        sub: "alice".into(),
        name: name.map(str::to_string),
        ws: vec!["acme".into()],
        scope: "read".into(),
        exp: now() + 600,
        iat: Some(now()),
        nbf: None,
        iss: None,
        aud: None,
    }
}

#[test]
fn not_before_is_honoured() {
    let auth = Auth::new(&[7u8; 32]).unwrap();
    let later = TokenClaims {
        nbf: Some(now() + 300),
        ..claims(None)
    };
    let err = v(&auth, Some(&signed(&auth, &later))).unwrap_err();
    assert!(err.to_string().contains("ImmatureSignature"), "{err}");
    let now_valid = TokenClaims {
        nbf: Some(now() - 1),
        ..claims(None)
    };
    assert!(v(&auth, Some(&signed(&auth, &now_valid))).is_ok());
}

/// A token is refused from its `exp` on, with no leeway, as a live stream ends then (REST took
/// it for 5 s more); `nbf` keeps its few seconds for an issuer's clock a little ahead.
#[test]
fn a_token_is_refused_at_its_exp_and_nbf_has_a_few_seconds() {
    let auth = Auth::new(&[7u8; 32]).unwrap();
    let at = |exp: u64, nbf: Option<u64>| {
        let token = TokenClaims {
            exp,
            nbf,
            ..claims(None)
        };
        v(&auth, Some(&signed(&auth, &token)))
    };
    for exp in [now(), now() - 1, now() - 4] {
        let err = at(exp, None).unwrap_err();
        assert!(
            err.to_string().contains("ExpiredSignature"),
            "exp {exp}: {err}"
        );
    }
    assert!(at(now() + 2, None).is_ok());
    assert!(
        at(now() + 600, Some(now() + 3)).is_ok(),
        "nbf 3 s ahead: within its leeway"
    );
    assert!(at(now() + 600, Some(now() + 30)).is_err());
}

#[test]
fn issuer_and_audience_are_required_when_configured() {
    let plain = Auth::new(&[7u8; 32]).unwrap();
    let strict = Auth::new(&[7u8; 32])
        .unwrap()
        .with_issuer_and_audience(Some("https://idp.test".into()), Some("pickup".into()));
    let with = |iss: Option<&str>, aud: Option<&str>| TokenClaims {
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
