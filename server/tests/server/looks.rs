//! "Since you looked" at both doors, in this process: `GET`/`PUT /api/v1/workspaces/{ws}/looked`
//! and the widget's server functions `looked` and `look`. Each viewer reads and writes only
//! their own look (the token's user), and an error is never answered as "never looked".

use crate::common::client::path;
use crate::common::client::{token, Answer, TestClient};
use crate::common::in_process::InProcess;
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

/// `/api/v1/workspaces/acme/looked`, from the contract.
fn looked_path() -> String {
    path::looked("acme")
}

async fn get(c: &TestClient, token: Option<&str>) -> Answer {
    c.get(&looked_path()).token(token).send().await
}

async fn put(c: &TestClient, token: Option<&str>, body: Value) -> Answer {
    c.request(Method::PUT, &looked_path())
        .token(token)
        .json(&body)
        .send()
        .await
}

/// The store's names, relative to its root, that are looks.
fn looks(s: &InProcess) -> Vec<String> {
    s.files()
        .iter()
        .map(|f| {
            f.strip_prefix(s.dir.path())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|f| f.starts_with("looked/"))
        .collect()
}

#[tokio::test]
async fn a_look_round_trips_at_both_doors_and_is_the_viewers_own() {
    let s = InProcess::start(&[]).await;
    let c = s.client();
    // Read-only tokens: a look needs only the read grant.
    let alice = token("alice", "acme", false);
    let bob = token("bob", "acme", false);

    let res = get(&c, Some(&alice)).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.text());
    assert_eq!(res.value(), json!({"at": null}));

    let res = put(&c, Some(&alice), json!({"at": "2026-01-02T03:04:05.678Z"})).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.text());
    assert_eq!(res.value(), json!({"at": "2026-01-02T03:04:05.678Z"}));
    // Another offset, the same instant: kept in the server's one form.
    let res = put(
        &c,
        Some(&alice),
        json!({"at": "2026-01-02T04:04:05.678+01:00"}),
    )
    .await;
    assert_eq!(res.value(), json!({"at": "2026-01-02T03:04:05.678Z"}));
    assert_eq!(
        get(&c, Some(&alice)).await.value(),
        json!({"at": "2026-01-02T03:04:05.678Z"})
    );
    assert_eq!(looks(&s), vec!["looked/acme/alice".to_string()]);

    // Bob's token sees his own (none), never Alice's; his look does not touch hers.
    assert_eq!(get(&c, Some(&bob)).await.value(), json!({"at": null}));
    let res = c.server_fn("looked", &[("ws", "acme")], Some(&bob)).await;
    assert_eq!(
        (res.status, res.value()),
        (StatusCode::OK, json!({"at": null}))
    );
    let res = c
        .server_fn(
            "look",
            &[("ws", "acme"), ("at", "2026-01-03T00:00:00Z")],
            Some(&bob),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.text());
    assert_eq!(res.value(), json!({"at": "2026-01-03T00:00:00.000Z"}));
    assert_eq!(
        c.server_fn("looked", &[("ws", "acme")], Some(&alice))
            .await
            .value(),
        json!({"at": "2026-01-02T03:04:05.678Z"})
    );
    assert_eq!(
        get(&c, Some(&bob)).await.value(),
        json!({"at": "2026-01-03T00:00:00.000Z"})
    );
    let mut want = vec![
        "looked/acme/alice".to_string(),
        "looked/acme/bob".to_string(),
    ];
    want.sort();
    let mut got = looks(&s);
    got.sort();
    assert_eq!(got, want);

    // A look in the future is kept as the server's now.
    let res = put(&c, Some(&alice), json!({"at": "2999-01-01T00:00:00Z"})).await;
    let kept = res.value()["at"].as_str().unwrap().to_string();
    let kept = chrono::DateTime::parse_from_rfc3339(&kept).unwrap();
    let now = chrono::Utc::now();
    assert!(
        (now - kept.with_timezone(&chrono::Utc)).num_seconds().abs() < 60,
        "{kept} is not now ({now})"
    );
}

#[tokio::test]
async fn looks_are_refused_as_the_other_routes_refuse() {
    let s = InProcess::start(&[]).await;
    let c = s.client();
    let alice = token("alice", "acme", false);
    let stranger = token("mallory", "beta", true);
    let before = s.files();
    let good = json!({"at": "2026-01-02T03:04:05Z"});
    let at = [("ws", "acme"), ("at", "2026-01-02T03:04:05Z")];
    for (who, token, status, code) in [
        (
            "no token",
            None,
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
        ),
        (
            "another workspace's token",
            Some(stranger.as_str()),
            StatusCode::FORBIDDEN,
            "forbidden",
        ),
    ] {
        for res in [
            get(&c, token).await,
            put(&c, token, good.clone()).await,
            c.server_fn("looked", &[("ws", "acme")], token).await,
            c.server_fn("look", &at, token).await,
        ] {
            assert_eq!(
                (res.status, res.error()),
                (status, code.to_string()),
                "{who}"
            );
        }
    }

    // A time that is not RFC 3339, at both doors; a body that is not the route's.
    for bad in ["yesterday", "2026-01-02", "2026-01-02 03:04:05", ""] {
        let res = put(&c, Some(&alice), json!({ "at": bad })).await;
        assert_eq!(
            (res.status, res.error()),
            (StatusCode::BAD_REQUEST, "invalid_body".to_string()),
            "{bad:?}"
        );
        assert!(res.value()["message"]
            .as_str()
            .unwrap()
            .contains("RFC 3339"));
        let res = c
            .server_fn("look", &[("ws", "acme"), ("at", bad)], Some(&alice))
            .await;
        assert_eq!(
            (res.status, res.error()),
            (StatusCode::BAD_REQUEST, "invalid_body".to_string()),
            "server fn, {bad:?}: {}",
            res.text()
        );
    }
    for body in [
        json!({}),
        json!({"at": null}),
        json!({"at": 5}),
        json!({"at": "2026-01-02T03:04:05Z", "user": "bob"}),
    ] {
        let res = put(&c, Some(&alice), body.clone()).await;
        assert_eq!(
            (res.status, res.error()),
            (StatusCode::BAD_REQUEST, "invalid_body".to_string()),
            "{body}"
        );
    }
    // A field a server function does not take is refused at that door too, for each call.
    let at = "2026-01-02T03:04:05Z";
    for (name, args) in [
        ("look", vec![("ws", "acme"), ("at", at), ("user", "bob")]),
        ("looked", vec![("ws", "acme"), ("user", "bob")]),
        (
            "recent",
            vec![("ws", "acme"), ("filter", "all"), ("owner", "bob")],
        ),
        (
            "dismiss",
            vec![("ws", "acme"), ("id", "x"), ("force", "yes")],
        ),
    ] {
        let res = c.server_fn(name, &args, Some(&alice)).await;
        assert_eq!(
            (res.status, res.error()),
            (StatusCode::BAD_REQUEST, "invalid_body".to_string()),
            "{name} {args:?}: {}",
            res.text()
        );
        assert!(res.text().contains("unknown field"), "{}", res.text());
    }
    // Over the body limit, as every route.
    let huge = format!(r#"{{"at": "{}"}}"#, "9".repeat(70 * 1024));
    let res = c
        .request(Method::PUT, &looked_path())
        .bearer(&alice)
        .raw_json(huge)
        .send()
        .await;
    assert_eq!(
        (res.status, res.error()),
        (StatusCode::PAYLOAD_TOO_LARGE, "too_large".to_string())
    );
    // A bad workspace name.
    let res = c.get(&path::looked("AC%2FME")).bearer(&alice).send().await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST);
    assert_eq!(s.files(), before, "nothing was written");
}

/// A store that stops answering (a file store whose directory became a file): 503
/// `store_unavailable` at both doors, never `{"at": null}`.
#[tokio::test]
async fn a_store_that_is_down_is_503_never_never_looked() {
    let root = tempfile::tempdir().unwrap();
    let store = root.path().join("store");
    std::fs::create_dir(&store).unwrap();
    let url = format!("file://{}", store.display());
    let s = InProcess::start_on(tempfile::tempdir().unwrap(), &url, &[]).await;
    let c = s.client();
    let alice = token("alice", "acme", false);
    std::fs::remove_dir_all(&store).unwrap();
    std::fs::write(&store, "not a directory").unwrap();
    for (what, res) in [
        ("GET", get(&c, Some(&alice)).await),
        (
            "PUT",
            put(&c, Some(&alice), json!({"at": "2026-01-02T03:04:05Z"})).await,
        ),
        (
            "server fn looked",
            c.server_fn("looked", &[("ws", "acme")], Some(&alice)).await,
        ),
        (
            "server fn look",
            c.server_fn(
                "look",
                &[("ws", "acme"), ("at", "2026-01-02T03:04:05Z")],
                Some(&alice),
            )
            .await,
        ),
    ] {
        assert_eq!(
            (res.status, res.error()),
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "store_unavailable".to_string()
            ),
            "{what}: {}",
            res.text()
        );
        assert!(!res.text().contains("\"at\""), "{what}: {}", res.text());
    }
}

/// A look whose object does not parse is a 503 too, never "never looked".
#[tokio::test]
async fn an_unreadable_look_is_503() {
    let s = InProcess::start(&[]).await;
    let c = s.client();
    let alice = token("alice", "acme", false);
    let res = put(&c, Some(&alice), json!({"at": "2026-01-02T03:04:05Z"})).await;
    assert_eq!(res.status, StatusCode::OK);
    std::fs::write(s.dir.path().join("looked/acme/alice"), "{").unwrap();
    let res = get(&c, Some(&alice)).await;
    assert_eq!(
        (res.status, res.error()),
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable".to_string()
        ),
        "{}",
        res.text()
    );
}
