//! What every answer of the app carries for browsers (the app in this process): CORS for the
//! origins allowed and no others, the headers another origin's page may read, the CSP and the
//! caching of pages and API answers.

use crate::common::client::path;
use crate::common::client::{now_secs, signed, token};
use crate::common::in_process::InProcess;
use app::contract::{EXPIRES_IN, TOKEN_EXPIRES, VIEWER};
use axum::http::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn cors_only_for_allowed_origins() {
    // Spaces around entries and empty entries are what people write: each entry counts.
    let s = InProcess::start(&[
        "--allowed-origins",
        " http://allowed.test, http://127.0.0.1:9 ,,",
    ])
    .await;
    let c = s.client();
    let preflight = |origin: &'static str| {
        c.request(Method::OPTIONS, path::server_fn("recent"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization,content-type",
            )
            .send()
    };
    let ok = preflight("http://allowed.test").await;
    assert_eq!(
        ok.header("access-control-allow-origin"),
        Some("http://allowed.test")
    );
    assert!(ok
        .header("access-control-allow-headers")
        .unwrap()
        .contains("authorization"));
    let second = preflight("http://127.0.0.1:9").await;
    assert_eq!(
        second.header("access-control-allow-origin"),
        Some("http://127.0.0.1:9"),
        "the entry after \", \" counts too"
    );
    let no = preflight("http://evil.test").await;
    assert!(no.header("access-control-allow-origin").is_none());
    let reader = token("alice", "acme", false);
    let get = c
        .get(&path::recent("acme"))
        .bearer(&reader)
        .header("origin", "http://evil.test")
        .send()
        .await;
    assert!(get.header("access-control-allow-origin").is_none());
    // A page on an allowed origin may read what a write answers: the ETag (of a GET, for the
    // If-Match of an update), the request id, and how long until the TTL deletes the run.
    let writer = token("alice", "acme", true);
    let registered = c
        .post(&path::items("acme"))
        .bearer(&writer)
        .header("origin", "http://allowed.test")
        .json(&json!({"key": "k", "title": "t", "status": "running"}))
        .send()
        .await;
    assert_eq!(registered.status, StatusCode::CREATED);
    let exposed = registered
        .header("access-control-expose-headers")
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    for header in ["x-request-id", EXPIRES_IN] {
        assert!(registered.headers.contains_key(header), "{header} not sent");
    }
    for header in ["etag", "x-request-id", EXPIRES_IN] {
        assert!(
            exposed.contains(header),
            "{header} not exposed: {exposed:?}"
        );
    }
}

/// A `/recent` answer says whom the server took the token for and when it expires, and a page
/// of another origin may read both: share.js groups a browser's tabs by them instead of
/// decoding tokens itself.
#[tokio::test]
async fn recent_says_whom_the_token_is_for_and_when_it_expires() {
    let s = InProcess::start(&["--allowed-origins", "http://allowed.test"]).await;
    let c = s.client();
    let exp = now_secs() + 600;
    let reader =
        signed(&json!({"sub": "alice", "ws": ["acme"], "scope": "read", "exp": exp, "jti": "one"}));
    let renewed = signed(
        &json!({"sub": "alice", "ws": ["acme"], "scope": "read", "exp": exp + 60, "jti": "two"}),
    );
    let other = signed(&json!({"sub": "bob", "ws": ["acme"], "scope": "read", "exp": exp}));
    let viewer_of = |token: String| {
        let c = &c;
        async move {
            let page = c
                .get(&format!("{}?cap=1", path::recent("acme")))
                .bearer(&token)
                .header("origin", "http://allowed.test")
                .send()
                .await;
            assert_eq!(page.status, StatusCode::OK);
            let exposed = page
                .header("access-control-expose-headers")
                .map(str::to_ascii_lowercase)
                .unwrap_or_default();
            for header in [VIEWER, TOKEN_EXPIRES] {
                assert!(
                    exposed.contains(header),
                    "{header} not exposed: {exposed:?}"
                );
            }
            let viewer = page.header(VIEWER).map(str::to_string);
            let expires = page.header(TOKEN_EXPIRES).map(str::to_string);
            (viewer, expires)
        }
    };
    let (alice, alice_expires) = viewer_of(reader).await;
    assert_eq!(alice.as_deref(), Some("alice"));
    assert_eq!(alice_expires, Some(exp.to_string()));
    let (again, again_expires) = viewer_of(renewed).await;
    assert_eq!(again, alice, "a renewed token is the same viewer");
    assert_eq!(again_expires, Some((exp + 60).to_string()));
    let (bob, _) = viewer_of(other).await;
    assert_eq!(bob.as_deref(), Some("bob"));
}

#[tokio::test]
async fn pages_carry_a_csp_and_api_answers_are_not_stored() {
    let s = InProcess::start(&["--frame-ancestors", "'self'  https://host.test"]).await;
    let c = s.client();
    let token = token("alice", "acme", false);
    let get = |path: &str| c.get(path).bearer(&token).send();
    for path in ["/", "/index.html", "/pickup.js", "/embed.html"] {
        let res = get(path).await;
        let csp = res
            .header("content-security-policy")
            .unwrap_or_else(|| panic!("{path}: no CSP"));
        for directive in [
            "default-src 'self'",
            "script-src 'self' 'wasm-unsafe-eval';",
            "object-src 'none'",
            "base-uri 'none'",
            "frame-ancestors 'self' https://host.test",
        ] {
            assert!(csp.contains(directive), "{path}: {csp}");
        }
        assert!(!csp.contains("unsafe-inline"), "{path}: {csp}");
        assert_eq!(
            res.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
        assert!(res.header("x-request-id").is_some(), "{path}");
    }
    let (acme, beta) = (path::recent("acme"), path::recent("beta"));
    for path in [acme.as_str(), beta.as_str(), "/readyz", "/api/nothing/here"] {
        let res = get(path).await;
        assert_eq!(res.header("cache-control"), Some("no-store"), "{path}");
        assert_eq!(
            res.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
        assert!(res.header("content-security-policy").is_none(), "{path}");
    }
    // A request id the caller sends comes back (a proxy's id keeps following the request).
    let res = c
        .get("/healthz")
        .header("x-request-id", "from-the-proxy-42")
        .send()
        .await;
    assert_eq!(res.header("x-request-id"), Some("from-the-proxy-42"));
}
