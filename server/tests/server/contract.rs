//! The contract's answers from the whole server in this process (`pickup::app`, called with
//! `tower::ServiceExt::oneshot`): who may call what, and what a refusal says. No socket and no
//! child process: `http_api.rs` keeps the tests where the process is the point.

use crate::common::client::path;
use crate::common::client::{now_secs, signed, token, TestClient};
use crate::common::in_process::InProcess;
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

struct Call {
    method: Method,
    path: String,
    body: Option<Value>,
    writes: bool,
}

impl Call {
    fn get(path: String) -> Call {
        Call {
            method: Method::GET,
            path,
            body: None,
            writes: false,
        }
    }
}

fn routes(id: &str) -> Vec<Call> {
    let up = json!({"title": "t", "status": "succeeded"});
    let new = json!({"key": "k", "title": "t"});
    let c = |method: Method, path: String, body: Option<Value>, writes: bool| Call {
        method,
        path,
        body,
        writes,
    };
    vec![
        c(Method::POST, path::items("acme"), Some(new), true),
        c(Method::PUT, path::item("acme", id), Some(up), true),
        c(Method::GET, path::item("acme", id), None, false),
        c(Method::DELETE, path::item("acme", id), None, true),
        c(Method::GET, path::recent("acme"), None, false),
        c(Method::POST, path::dismiss("acme", id), None, false),
        c(Method::GET, path::looked("acme"), None, false),
        c(
            Method::PUT,
            path::looked("acme"),
            Some(json!({"at": "2026-01-02T03:04:05Z"})),
            false,
        ),
    ]
}

async fn send(c: &TestClient, call: &Call, token: Option<&str>) -> (StatusCode, Value) {
    c.send(call.method.clone(), &call.path, token, call.body.as_ref())
        .await
}

#[tokio::test]
async fn authorization_matrix_refuses_and_writes_nothing() {
    let s = InProcess::start(&[]).await;
    let c = s.client();
    let writer = token("alice", "acme", true);
    let item = c.register(&writer, "acme", "existing").await;
    let id = item.id;
    let before = s.files();

    let claims = |extra: Value| {
        let mut c =
            json!({"sub": "alice", "ws": ["acme"], "scope": "read write", "exp": now_secs() + 600});
        c.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        c
    };
    let forged = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims(json!({})),
        &jsonwebtoken::EncodingKey::from_secret(&[9u8; 32]).unwrap(),
    )
    .unwrap();
    let expired = signed(&claims(json!({"exp": now_secs() - 3_540})));
    let not_yet = signed(&claims(json!({"nbf": now_secs() + 600})));
    let bidi_name = signed(&claims(json!({"name": "Alice\u{202E}nimda"})));
    let other_ws = token("mallory", "beta", true);
    let reader = token("bob", "acme", false);
    let cases: Vec<(&str, Option<&str>, StatusCode, &str)> = vec![
        (
            "not valid yet (nbf)",
            Some(&not_yet),
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
        ),
        (
            "a name with a bidi override",
            Some(&bidi_name),
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
        ),
        (
            "no token",
            None,
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
        ),
        (
            "bad signature",
            Some(&forged),
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
        ),
        (
            "expired",
            Some(&expired),
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
        ),
        (
            "garbage",
            Some("not.a.jwt"),
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
        ),
        (
            "wrong workspace",
            Some(&other_ws),
            StatusCode::FORBIDDEN,
            "forbidden",
        ),
    ];
    for call in routes(&id) {
        for (what, token, status, code) in &cases {
            let (got, body) = send(&c, &call, *token).await;
            assert_eq!(
                (got, body["error"].as_str()),
                (*status, Some(*code)),
                "{what}: {} {}",
                call.method,
                call.path
            );
            assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
        }
        if call.writes {
            let (got, body) = send(&c, &call, Some(&reader)).await;
            assert_eq!(
                (got, body["error"].as_str()),
                (StatusCode::FORBIDDEN, Some("forbidden")),
                "read scope: {} {}",
                call.method,
                call.path
            );
        }
    }
    for (what, token, status, _) in &cases {
        let got = c
            .server_fn("recent", &[("ws", "acme"), ("filter", "all")], *token)
            .await
            .status;
        assert_eq!(got, *status, "server fn recent, {what}");
        let got = c
            .server_fn("dismiss", &[("ws", "acme"), ("id", &id)], *token)
            .await
            .status;
        assert_eq!(got, *status, "server fn dismiss, {what}");
        let got = c
            .server_fn("looked", &[("ws", "acme")], *token)
            .await
            .status;
        assert_eq!(got, *status, "server fn looked, {what}");
        let got = c
            .server_fn(
                "look",
                &[("ws", "acme"), ("at", "2026-01-02T03:04:05Z")],
                *token,
            )
            .await
            .status;
        assert_eq!(got, *status, "server fn look, {what}");
    }
    assert_eq!(s.files(), before, "nothing was written or deleted");

    // A non-member learns nothing: the same answer for a workspace that exists and one that does not.
    let item_of = |ws: &str| Call::get(path::item(ws, &id));
    let (a, _) = send(&c, &item_of("acme"), Some(&other_ws)).await;
    let (b, _) = send(&c, &item_of("nothing-here"), Some(&other_ws)).await;
    assert_eq!((a, b), (StatusCode::FORBIDDEN, StatusCode::FORBIDDEN));
}

/// The token is checked before the body: a stranger's PUT or POST with a body the route would
/// refuse gets 401 or 403, never a 400 that describes the body.
#[tokio::test]
async fn the_token_is_checked_before_the_body() {
    let s = InProcess::start(&[]).await;
    let c = s.client();
    let alice = token("alice", "acme", true);
    let outsider = token("eve", "other", true);
    let item = c.register(&alice, "acme", "k").await;
    let id = &item.id;
    let put = path::item("acme", id);
    let post = path::items("acme");
    let looked = path::looked("acme");
    let odd = json!({"title": "t", "status": "running", "surprise": true});
    for (token, want) in [
        (None, StatusCode::UNAUTHORIZED),
        (Some(&outsider), StatusCode::FORBIDDEN),
    ] {
        for (method, path) in [
            (Method::PUT, &put),
            (Method::POST, &post),
            (Method::PUT, &looked),
        ] {
            let (status, e) = c
                .send(method, path, token.map(String::as_str), Some(&odd))
                .await;
            assert_eq!(status, want);
            assert!(!e["message"].as_str().unwrap().contains("surprise"), "{e}");
        }
    }
}
