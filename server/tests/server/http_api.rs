//! The contract over HTTP, from the app in this process (`oneshot`, or served on a loopback
//! port where a raw connection is the point): what each route refuses, and what it answers.

use crate::common::client::path;
use crate::common::client::{now_secs, signed, token, Answer};
use crate::common::in_process::{InProcess, Served};
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

#[tokio::test]
async fn hostile_names_and_bodies_are_refused_and_write_nothing() {
    let s = Served::start(&[]);
    let c = s.client();
    let token = token("alice", "acme", true);
    let id = c.register(&token, "acme", "existing").await.id;
    let before = s.files();
    let long = "a".repeat(10_000);
    let bad_names = [
        "..",
        "a%2Fb",
        "%2e%2e",
        "%2E%2E%2Fetc",
        "a/b",
        "",
        "%D0%B0cme",
        "ACME",
        &long,
        "a%00b",
        "acme%20",
    ];
    for ws in bad_names {
        for path in [path::items(ws), path::recent(ws)] {
            let method = if path.ends_with("items") {
                Method::POST
            } else {
                Method::GET
            };
            let body = json!({"key": "k", "title": "t"});
            let (got, body) = c.send(method, &path, Some(&token), Some(&body)).await;
            assert_eq!(got, StatusCode::BAD_REQUEST, "ws {ws:?}: {body}");
            assert_eq!(body["error"], "invalid_name", "ws {ws:?}");
        }
    }
    for bad_id in [
        "..",
        "%2e%2e%2fsecret",
        "123_a",
        "8299999999999_a%2Fb",
        "8299999999999_..",
        &long,
    ] {
        let path = path::item("acme", bad_id);
        let (got, body) = c.send(Method::GET, &path, Some(&token), None).await;
        assert_eq!(
            (got, body["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_name")),
            "id {bad_id:?}"
        );
    }
    let post = |body: String| {
        c.post(&path::items("acme"))
            .bearer(&token)
            .raw_json(body)
            .send()
    };
    let bodies: Vec<(String, &str)> = vec![
        ("{".into(), "malformed JSON"),
        (json!({"key": 5, "title": "t"}).to_string(), "wrong type"),
        (
            json!({"key": "a/b", "title": "t"}).to_string(),
            "key with a slash",
        ),
        (json!({"key": "k", "title": ""}).to_string(), "empty title"),
        (
            json!({"key": "k", "title": "t".repeat(201)}).to_string(),
            "long title",
        ),
        (
            json!({"key": "k", "title": "t", "url": "javascript:alert(1)"}).to_string(),
            "javascript url",
        ),
        (
            json!({"key": "k", "title": "t", "progress": 2}).to_string(),
            "progress > 1",
        ),
        (
            json!({"key": "k", "title": "t", "status": "exploded"}).to_string(),
            "unknown status",
        ),
        (
            json!({"key": "k", "title": "t", "extra": 1}).to_string(),
            "unknown field",
        ),
        (
            json!({"key": "k", "title": "invoice\u{202E}fdp.exe"}).to_string(),
            "title with a right-to-left override",
        ),
        (
            json!({"key": "k", "title": "a\u{2067}b"}).to_string(),
            "title with a bidi isolate",
        ),
        (
            json!({"key": "k", "title": "a\u{001B}[31mred"}).to_string(),
            "title with an escape character",
        ),
        (
            json!({"key": "k", "title": "t", "url": "/runs/\u{202E}42"}).to_string(),
            "url with a right-to-left override",
        ),
    ];
    for (body, what) in bodies {
        let res = post(body).await;
        assert_eq!(res.status, StatusCode::BAD_REQUEST, "{what}");
        let v = res.value();
        assert!(
            v["error"] == "invalid_body" || v["error"] == "invalid_name",
            "{what}: {v}"
        );
    }
    // A 10 MB body is refused from its Content-Length, before it is read: announce it, then
    // read the answer (writing it all would race the server closing the connection).
    let head = too_large_answer(s.addr(), &token, 10 * 1024 * 1024).await;
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");
    assert!(head.contains("too_large"), "{head}");
    // The unconditional update exists; the file store cannot do If-Match: 501, not a plain write.
    let res = c
        .request(Method::PUT, &path::item("acme", &id))
        .bearer(&token)
        .header("if-match", "\"whatever\"")
        .json(&json!({"title": "changed", "status": "running"}))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::NOT_IMPLEMENTED);
    // An update that names an owner whose name would display in another order.
    let body = json!({"title": "t", "status": "running", "owner": {"sub": "alice", "name": "Al\u{202E}ice"}});
    let res = c.update(&token, "acme", &id, &body).await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST);
    assert_eq!(res.error(), "invalid_body", "{}", res.text());
    assert_eq!(s.files(), before, "nothing was written");
    let got = c.item(&token, "acme", &id).await.value();
    assert_eq!(got["title"], "item existing");
}

async fn too_large_answer(addr: &str, token: &str, length: usize) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n",
        path::items("acme")
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let n = tcp.read(&mut answer).await.unwrap();
    String::from_utf8_lossy(&answer[..n]).to_string()
}

#[tokio::test]
async fn producer_lifecycle_and_server_functions() {
    let s = InProcess::start(&[]).await;
    let c = s.client();
    let token = token("alice", "acme", true);
    let id = c.register(&token, "acme", "run-1").await.id;
    let body = json!({"title": "Run 1", "status": "succeeded", "progress": 1});
    let res = c.update(&token, "acme", &id, &body).await;
    assert_eq!(res.status, StatusCode::OK);
    let page = c.recent(&token, "acme", "cap=3").await;
    assert_eq!(page.cards[0].status, app::contract::Status::Succeeded);
    assert!(!page.partial);
    let form = [("ws", "acme"), ("filter", "mine")];
    let res = c.server_fn("recent", &form, Some(&token)).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.text());
    assert!(res.text().contains("Run 1"));
    let form = [("ws", "acme"), ("id", id.as_str())];
    let res = c.server_fn("dismiss", &form, Some(&token)).await;
    assert_eq!(res.status, StatusCode::OK);
    let page = c.recent(&token, "acme", "").await;
    assert_eq!(page.cards.len(), 0, "dismissed for alice");
    assert_eq!(
        c.remove(&token, "acme", &id).await.status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        c.item(&token, "acme", &id).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(c.status("/healthz").await, StatusCode::OK);
    assert_eq!(c.status("/readyz").await, StatusCode::OK);
}

/// Only the owner (the registering token's subject) changes or removes an item: another
/// writer of the same workspace gets 403 and nothing is written; `owner` in a body cannot
/// re-attribute it; a record PUT back as GET gave it is accepted.
#[tokio::test]
async fn only_the_owner_updates_or_removes_an_item() {
    let s = InProcess::start(&[]).await;
    let c = s.client();
    let alice = token("alice", "acme", true);
    let mallory = token("mallory", "acme", true);
    let id = c.register(&alice, "acme", "mine").await.id;
    let before = s.files();
    let body = json!({"title": "hijacked", "status": "failed"});
    let res = c.update(&mallory, "acme", &id, &body).await;
    assert_eq!(res.status, StatusCode::FORBIDDEN);
    let res = c.remove(&mallory, "acme", &id).await;
    assert_eq!(res.status, StatusCode::FORBIDDEN);
    assert_eq!(s.files(), before, "a refused write writes nothing");

    // The owner cannot hand the item to someone else through the body either.
    let huge = "m".repeat(60_000);
    for owner in [
        json!({"sub": "mallory", "name": "M"}),
        json!({"sub": huge, "name": "x"}),
    ] {
        let body = json!({"title": "t", "status": "running", "owner": owner});
        let res = c.update(&alice, "acme", &id, &body).await;
        assert_eq!(res.status, StatusCode::BAD_REQUEST);
        let e = res.value();
        assert!(e["message"].as_str().unwrap().starts_with("owner "), "{e}");
    }
    assert_eq!(s.files(), before);

    // GET, change the status, PUT it back whole: accepted, and still alice's.
    let mut record = c.item(&alice, "acme", &id).await.value();
    record["status"] = json!("succeeded");
    let res = c.update(&alice, "acme", &id, &record).await;
    assert_eq!(res.status, StatusCode::OK);
    let after: app::contract::ItemRecord = res.json();
    assert_eq!(after.owner.sub, "alice");
    assert_eq!(after.status, app::contract::Status::Succeeded);
    record["key"] = json!("other");
    let res = c.update(&alice, "acme", &id, &record).await;
    assert_eq!(
        res.status,
        StatusCode::BAD_REQUEST,
        "a changed key is refused"
    );

    let res = c.remove(&alice, "acme", &id).await;
    assert_eq!(res.status, StatusCode::NO_CONTENT);
    assert!(
        s.files().iter().all(|f| !f.to_string_lossy().contains(&id)),
        "marker and record are gone"
    );
}

/// PUT, DELETE and dismiss of an id that was never registered answer 404 and create nothing;
/// an id dated beyond the allowed clock skew is refused with 400.
#[tokio::test]
async fn only_real_ids_are_written() {
    let s = InProcess::start(&[]).await;
    let c = s.client();
    let alice = token("alice", "acme", true);
    c.register(&alice, "acme", "real").await;
    let before = s.files();
    let now_ms = now_secs() * 1000;
    let never = format!("{:013}_never", 9_999_999_999_999 - (now_ms - 5_000));
    let future = format!("{:013}_future", 9_999_999_999_999 - (now_ms + 3_600_000));
    for (id, want) in [
        (&never, StatusCode::NOT_FOUND),
        (&future, StatusCode::BAD_REQUEST),
    ] {
        let base = path::item("acme", id);
        let calls = [
            (
                Method::PUT,
                base.clone(),
                Some(json!({"title": "t", "status": "running"})),
            ),
            (Method::DELETE, base.clone(), None),
            (Method::POST, format!("{base}/dismiss"), None),
        ];
        for (method, path, body) in calls {
            let (status, answer) = c
                .send(method.clone(), &path, Some(&alice), body.as_ref())
                .await;
            assert_eq!(status, want, "{method} {path}: {answer}");
        }
        let form = [("ws", "acme"), ("id", id.as_str())];
        let res = c.server_fn("dismiss", &form, Some(&alice)).await;
        assert_eq!(res.status, want, "server fn dismiss {id}: {}", res.text());
    }
    assert_eq!(s.files(), before, "nothing was created");
}

/// `before` is an id like any other: malformed or dated in the future, 400 `invalid_name`, on
/// both doors; a real one gives the next page.
#[tokio::test]
async fn recent_before_takes_a_real_id_and_gives_the_next_page() {
    let s = InProcess::start(&[]).await;
    let c = s.client();
    let alice = token("alice", "acme", true);
    let older = c.register(&alice, "acme", "older").await.id;
    let newer = c.register(&alice, "acme", "newer").await.id;
    let page = |query: String| {
        let (c, alice) = (&c, &alice);
        async move {
            let res = c.page(alice, "acme", &query).await;
            (res.status, res.value())
        }
    };
    let (status, first) = page("cap=1".into()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(first["cards"][0]["id"], newer.as_str());
    assert_eq!(first["more"], true);
    let (status, next) = page(format!("cap=1&before={newer}")).await;
    assert_eq!(status, StatusCode::OK, "{next}");
    assert_eq!(next["cards"][0]["id"], older.as_str());
    assert_eq!(next["more"], false);

    let now_ms = now_secs() * 1000;
    let future = format!("{:013}_future", 9_999_999_999_999 - (now_ms + 3_600_000));
    for bad in ["junk", "123_a", future.as_str()] {
        let (status, body) = page(format!("before={bad}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "before={bad}: {body}");
        assert_eq!(body["error"], "invalid_name", "before={bad}");
        let form = [("ws", "acme"), ("filter", "all"), ("before", bad)];
        let res = c.server_fn("recent", &form, Some(&alice)).await;
        assert_eq!(
            res.status,
            StatusCode::BAD_REQUEST,
            "server fn, before={bad}: {}",
            res.text()
        );
    }
    let form = [
        ("ws", "acme"),
        ("filter", "all"),
        ("cap", "1"),
        ("before", newer.as_str()),
    ];
    let res = c.server_fn("recent", &form, Some(&alice)).await;
    let body = res.text();
    assert_eq!(res.status, StatusCode::OK, "{body}");
    assert!(body.contains("\"more\":false") && body.contains(&older));
}

/// A token of `pickup token`'s claims for alice in acme, with an issuer and an audience.
fn token_with(iss: Option<&str>, aud: Option<&str>) -> String {
    let mut claims =
        json!({"sub": "alice", "ws": ["acme"], "scope": "read", "exp": now_secs() + 3600});
    if let Some(iss) = iss {
        claims["iss"] = iss.into();
    }
    if let Some(aud) = aud {
        claims["aud"] = aud.into();
    }
    signed(&claims)
}

#[tokio::test]
async fn issuer_and_audience_are_checked_when_configured() {
    let s = InProcess::start(&["--issuer", "https://idp.test", "--audience", "pickup"]).await;
    let c = s.client();
    let cases = [
        (None, None, StatusCode::UNAUTHORIZED),
        (Some("https://idp.test"), None, StatusCode::UNAUTHORIZED),
        (None, Some("pickup"), StatusCode::UNAUTHORIZED),
        (
            Some("https://other.test"),
            Some("pickup"),
            StatusCode::UNAUTHORIZED,
        ),
        (Some("https://idp.test"), Some("pickup"), StatusCode::OK),
    ];
    for (iss, aud, want) in cases {
        let path = &path::recent("acme");
        let (got, body) = c
            .send(Method::GET, path, Some(&token_with(iss, aud)), None)
            .await;
        assert_eq!(got, want, "{iss:?} {aud:?}: {body}");
    }
}

/// A store that stops answering: a file store whose directory has become a file.
#[tokio::test]
async fn a_store_error_gives_a_generic_503_with_the_request_id_and_no_detail() {
    let root = tempfile::tempdir().unwrap();
    let store = root.path().join("store-dir-xyz");
    std::fs::create_dir(&store).unwrap();
    let store_url = format!("file://{}", store.display());
    let s = InProcess::start_on(tempfile::tempdir().unwrap(), &store_url, &[]).await;
    let c = s.client();
    let token = token("alice", "acme", true);
    std::fs::remove_dir_all(&store).unwrap();
    std::fs::write(&store, "not a directory").unwrap();

    // A generic 503 that names its request id and shows nothing of the store; the body.
    let check = |what: &'static str, res: Answer| {
        let body = res.text();
        assert_eq!(
            res.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{what}: {body}"
        );
        let id = res
            .header("x-request-id")
            .unwrap_or_else(|| panic!("{what}: no X-Request-Id"));
        assert!(!id.is_empty());
        assert!(body.contains(&format!("request id {id}")), "{what}: {body}");
        for detail in ["store-dir-xyz", "directory", "os error"] {
            assert!(!body.contains(detail), "{what} shows {detail:?}: {body}");
        }
        body
    };
    let body = check("readyz", c.get("/readyz").send().await);
    assert!(body.starts_with("store not answering"), "{body}");

    let body = check("REST recent", c.page(&token, "acme", "").await);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"],
        "store_unavailable"
    );

    // The other door, the widget's server function, answers the same way.
    let form = [("ws", "acme"), ("filter", "all")];
    check(
        "server fn recent",
        c.server_fn("recent", &form, Some(&token)).await,
    );
}

/// An If-Match that is present but unreadable (not visible ASCII, or empty) is 400 and
/// nothing is written: it is never taken for an absent one, which would be a plain write.
#[tokio::test]
async fn an_unreadable_if_match_is_refused_not_ignored() {
    let s = InProcess::start(&[]).await;
    let c = s.client();
    let alice = token("alice", "acme", true);
    let id = c.register(&alice, "acme", "cas").await.id;
    let path = path::item("acme", &id);
    let before = std::fs::read(
        s.files()
            .into_iter()
            .find(|f| f.to_string_lossy().ends_with(".json"))
            .unwrap(),
    )
    .unwrap();
    for bad in [&b"\x80\"etag\""[..], b"", b"\"v1.!!.x\""] {
        let value = axum::http::HeaderValue::from_bytes(bad).unwrap();
        let res = c
            .request(Method::PUT, &path)
            .bearer(&alice)
            .header(axum::http::header::IF_MATCH, value)
            .json(&json!({"title": "overwritten", "status": "failed"}))
            .send()
            .await;
        assert_eq!(res.status, StatusCode::BAD_REQUEST, "{bad:?}");
        assert_eq!(res.error(), "invalid_body");
    }
    let after = std::fs::read(
        s.files()
            .into_iter()
            .find(|f| f.to_string_lossy().ends_with(".json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(before, after, "the record was not written");
}
