//! The contract over real HTTP against a real `pickup serve` on a file store.

use crate::common::server::{Server, SECRET};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::Duration;

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

async fn register(s: &Server, token: &str, ws: &str, key: &str) -> Value {
    let res = client()
        .post(format!("{}/api/v1/workspaces/{ws}/items", s.url))
        .bearer_auth(token)
        .json(&json!({"key": key, "title": format!("item {key}"), "status": "running"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    res.json().await.unwrap()
}

struct Call {
    method: Method,
    path: String,
    body: Option<Value>,
}

impl Call {
    fn get(path: String) -> Call {
        Call {
            method: Method::GET,
            path,
            body: None,
        }
    }
}

async fn send(s: &Server, call: &Call, token: Option<&str>) -> (StatusCode, Value) {
    let mut req = client().request(call.method.clone(), format!("{}{}", s.url, call.path));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(b) = &call.body {
        req = req.json(b);
    }
    let res = req.send().await.unwrap();
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// Server functions take their arguments as a JSON object (`cap` is a number).
async fn server_fn(
    s: &Server,
    name: &str,
    form: &[(&str, &str)],
    token: Option<&str>,
) -> (StatusCode, String) {
    let args: serde_json::Map<String, Value> = form
        .iter()
        .map(|(k, v)| match *k {
            "cap" => (k.to_string(), Value::from(v.parse::<u32>().unwrap())),
            _ => (k.to_string(), Value::from(*v)),
        })
        .collect();
    let mut req = client().post(format!("{}/api/{name}", s.url)).json(&args);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let res = req.send().await.unwrap();
    (res.status(), res.text().await.unwrap())
}

#[tokio::test]
async fn hostile_names_and_bodies_are_refused_and_write_nothing() {
    let s = Server::start(&[]);
    let token = s.token("alice", "acme", true);
    let item = register(&s, &token, "acme", "existing").await;
    let id = item["id"].as_str().unwrap().to_string();
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
        for path in [
            format!("/api/v1/workspaces/{ws}/items"),
            format!("/api/v1/workspaces/{ws}/recent"),
        ] {
            let method = if path.ends_with("items") {
                Method::POST
            } else {
                Method::GET
            };
            let call = Call {
                method,
                path,
                body: Some(json!({"key": "k", "title": "t"})),
            };
            let (got, body) = send(&s, &call, Some(&token)).await;
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
        let call = Call::get(format!("/api/v1/workspaces/acme/items/{bad_id}"));
        let (got, body) = send(&s, &call, Some(&token)).await;
        assert_eq!(
            (got, body["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_name")),
            "id {bad_id:?}"
        );
    }
    let post = |body: reqwest::Body| {
        client()
            .post(format!("{}/api/v1/workspaces/acme/items", s.url))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(body)
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
        let res = post(body.into()).await.unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{what}");
        let v: Value = res.json().await.unwrap();
        assert!(
            v["error"] == "invalid_body" || v["error"] == "invalid_name",
            "{what}: {v}"
        );
    }
    // A 10 MB body is refused from its Content-Length, before it is read: announce it, then
    // read the answer (writing it all would race the server closing the connection).
    let head = too_large_answer(&s, &token, 10 * 1024 * 1024).await;
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");
    assert!(head.contains("too_large"), "{head}");
    // The unconditional update exists; the file store cannot do If-Match: 501, not a plain write.
    let res = client()
        .put(format!("{}/api/v1/workspaces/acme/items/{id}", s.url))
        .bearer_auth(&token)
        .header("if-match", "\"whatever\"")
        .json(&json!({"title": "changed", "status": "running"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::NOT_IMPLEMENTED);
    // An update that names an owner whose name would display in another order.
    let res = client()
        .put(format!("{}/api/v1/workspaces/acme/items/{id}", s.url))
        .bearer_auth(&token)
        .json(&json!({"title": "t", "status": "running", "owner": {"sub": "alice", "name": "Al\u{202E}ice"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let v: Value = res.json().await.unwrap();
    assert_eq!(v["error"], "invalid_body", "{v}");
    assert_eq!(s.files(), before, "nothing was written");
    let got: Value = client()
        .get(format!("{}/api/v1/workspaces/acme/items/{id}", s.url))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(got["title"], "item existing");
}

async fn too_large_answer(s: &Server, token: &str, length: usize) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = s.url.trim_start_matches("http://");
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /api/v1/workspaces/acme/items HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let n = tcp.read(&mut answer).await.unwrap();
    String::from_utf8_lossy(&answer[..n]).to_string()
}

#[tokio::test]
async fn producer_lifecycle_and_server_functions() {
    let s = Server::start(&[]);
    let token = s.token("alice", "acme", true);
    let item = register(&s, &token, "acme", "run-1").await;
    let id = item["id"].as_str().unwrap();
    let url = format!("{}/api/v1/workspaces/acme/items/{id}", s.url);
    let res = client()
        .put(&url)
        .bearer_auth(&token)
        .json(&json!({"title": "Run 1", "status": "succeeded", "progress": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let page = s.recent_page(&token, "acme", "cap=3").await;
    assert_eq!(page["cards"][0]["status"], "succeeded");
    assert_eq!(page["partial"], false);
    let (status, body) = server_fn(
        &s,
        "recent",
        &[("ws", "acme"), ("filter", "mine")],
        Some(&token),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("Run 1"));
    let (status, _) = server_fn(&s, "dismiss", &[("ws", "acme"), ("id", id)], Some(&token)).await;
    assert_eq!(status, StatusCode::OK);
    let page = s.recent_page(&token, "acme", "").await;
    assert_eq!(
        page["cards"].as_array().unwrap().len(),
        0,
        "dismissed for alice"
    );
    assert_eq!(
        client()
            .delete(&url)
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        client()
            .get(&url)
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        client()
            .get(format!("{}/healthz", s.url))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        client()
            .get(format!("{}/readyz", s.url))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn cors_only_for_allowed_origins() {
    // Spaces around entries and empty entries are what people write: each entry counts.
    let s = Server::start(&[(
        "PICKUP_ALLOWED_ORIGINS",
        " http://allowed.test, http://127.0.0.1:9 ,,",
    )]);
    let preflight = |origin: &'static str| {
        client()
            .request(Method::OPTIONS, format!("{}/api/recent", s.url))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization,content-type",
            )
            .send()
    };
    let ok = preflight("http://allowed.test").await.unwrap();
    assert_eq!(
        ok.headers().get("access-control-allow-origin").unwrap(),
        "http://allowed.test"
    );
    assert!(ok
        .headers()
        .get("access-control-allow-headers")
        .unwrap()
        .to_str()
        .unwrap()
        .contains("authorization"));
    let second = preflight("http://127.0.0.1:9").await.unwrap();
    assert_eq!(
        second.headers().get("access-control-allow-origin").unwrap(),
        "http://127.0.0.1:9",
        "the entry after \", \" counts too"
    );
    let no = preflight("http://evil.test").await.unwrap();
    assert!(no.headers().get("access-control-allow-origin").is_none());
    let token = s.token("alice", "acme", false);
    let get = client()
        .get(format!("{}/api/v1/workspaces/acme/recent", s.url))
        .bearer_auth(&token)
        .header("origin", "http://evil.test")
        .send()
        .await
        .unwrap();
    assert!(get.headers().get("access-control-allow-origin").is_none());
    // A page on an allowed origin may read what a write answers: the ETag (of a GET, for the
    // If-Match of an update), the request id, and how long until the TTL deletes the run.
    let writer = s.token("alice", "acme", true);
    let registered = client()
        .post(format!("{}/api/v1/workspaces/acme/items", s.url))
        .bearer_auth(&writer)
        .header("origin", "http://allowed.test")
        .json(&serde_json::json!({"key": "k", "title": "t", "status": "running"}))
        .send()
        .await
        .unwrap();
    assert_eq!(registered.status(), StatusCode::CREATED);
    let exposed = registered
        .headers()
        .get("access-control-expose-headers")
        .map(|v| v.to_str().unwrap().to_ascii_lowercase())
        .unwrap_or_default();
    for header in ["x-request-id", "pickup-expires-in"] {
        assert!(
            registered.headers().contains_key(header),
            "{header} not sent"
        );
    }
    for header in ["etag", "x-request-id", "pickup-expires-in"] {
        assert!(
            exposed.contains(header),
            "{header} not exposed: {exposed:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_a_burst_keeps_every_acknowledged_registration() {
    let mut s = Server::start(&[]);
    let token = s.token("alice", "acme", true);
    let (acked_tx, mut acked_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let c = client();
    let mut tasks = Vec::new();
    for i in 0..300 {
        let (c, url, token, tx) = (c.clone(), s.url.clone(), token.clone(), acked_tx.clone());
        tasks.push(tokio::spawn(async move {
            let res = c
                .post(format!("{url}/api/v1/workspaces/acme/items"))
                .bearer_auth(&token)
                .json(&json!({"key": format!("k{i}"), "title": "t"}))
                .send()
                .await;
            if let Ok(res) = res {
                if res.status() == StatusCode::CREATED {
                    let v: Value = res.json().await.unwrap();
                    tx.send(v["id"].as_str().unwrap().to_string()).unwrap();
                }
            }
        }));
    }
    drop(acked_tx);
    // Terminate once the burst is under way (20 acknowledged), not after a sleep.
    let mut acked = Vec::new();
    while acked.len() < 20 {
        acked.push(
            acked_rx
                .recv()
                .await
                .expect("registrations were acknowledged"),
        );
    }
    let status = s.terminate();
    for t in tasks {
        t.await.unwrap();
    }
    while let Ok(id) = acked_rx.try_recv() {
        acked.push(id);
    }
    assert!(status.success(), "graceful shutdown exits 0: {status:?}");
    let root = s.dir.path();
    for id in &acked {
        assert!(
            root.join(format!("ws/acme/markers/{id}")).exists(),
            "marker of acknowledged {id}"
        );
        assert!(
            root.join(format!("ws/acme/items/{id}.json")).exists(),
            "record of acknowledged {id}"
        );
    }
    eprintln!(
        "SIGTERM during a burst: {} of 300 registrations acknowledged, all present",
        acked.len()
    );
}

/// The read cache shares listings between requests, but an item registered through another
/// server reaches every request to this server that starts one cache period (250 ms) after the
/// registration was answered: well inside the widget's one second. Not a time bound: each read
/// started after that point must show it, however slow the machine.
#[tokio::test]
async fn a_new_item_reaches_readers_of_another_server_within_a_second() {
    const FRESH_FOR: Duration = Duration::from_millis(250);
    let reader = Server::start(&[("PICKUP_READ_CACHE", "250ms")]);
    let store = format!("file://{}", reader.dir.path().display());
    let writer = Server::start(&[("PICKUP_STORE", &store)]);
    let token = reader.token("alice", "acme", true);
    let recent = || async {
        let page = reader.recent_page(&token, "acme", "").await;
        page["cards"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["title"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    register(&reader, &token, "acme", "before").await;
    assert_eq!(
        recent().await,
        vec!["item before"],
        "the reader's cache is warm"
    );

    register(&writer, &token, "acme", "after").await;
    let answered = tokio::time::Instant::now();
    // Reads until one starts a cache period after the answer: that one must show the item.
    loop {
        let started = tokio::time::Instant::now();
        let seen = recent().await.contains(&"item after".to_string());
        if started >= answered + FRESH_FOR {
            assert!(
                seen,
                "a read started {:?} after the registration's answer did not show it",
                started - answered
            );
            break;
        }
    }
}

async fn put_as(url: &str, token: &str, body: &Value) -> reqwest::Response {
    let req = client().put(url).bearer_auth(token).json(body);
    req.send().await.unwrap()
}

async fn delete_as(url: &str, token: &str) -> reqwest::Response {
    client()
        .delete(url)
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
}

/// Only the owner (the registering token's subject) changes or removes an item: another
/// writer of the same workspace gets 403 and nothing is written; `owner` in a body cannot
/// re-attribute it; a record PUT back as GET gave it is accepted.
#[tokio::test]
async fn only_the_owner_updates_or_removes_an_item() {
    let s = Server::start(&[]);
    let alice = s.token("alice", "acme", true);
    let mallory = s.token("mallory", "acme", true);
    let item = register(&s, &alice, "acme", "mine").await;
    let id = item["id"].as_str().unwrap();
    let url = format!("{}/api/v1/workspaces/acme/items/{id}", s.url);
    let before = s.files();
    let body = json!({"title": "hijacked", "status": "failed"});
    let res = put_as(&url, &mallory, &body).await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    let res = delete_as(&url, &mallory).await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    assert_eq!(s.files(), before, "a refused write writes nothing");

    // The owner cannot hand the item to someone else through the body either.
    let huge = "m".repeat(60_000);
    for owner in [
        json!({"sub": "mallory", "name": "M"}),
        json!({"sub": huge, "name": "x"}),
    ] {
        let res = put_as(
            &url,
            &alice,
            &json!({"title": "t", "status": "running", "owner": owner}),
        )
        .await;
        assert_eq!(res.status(), StatusCode::BAD_REQUEST);
        let e: Value = res.json().await.unwrap();
        assert!(e["message"].as_str().unwrap().starts_with("owner "), "{e}");
    }
    assert_eq!(s.files(), before);

    // GET, change the status, PUT it back whole: accepted, and still alice's.
    let mut record: Value = client()
        .get(&url)
        .bearer_auth(&alice)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    record["status"] = json!("succeeded");
    let res = put_as(&url, &alice, &record).await;
    assert_eq!(res.status(), StatusCode::OK);
    let after: Value = res.json().await.unwrap();
    assert_eq!(after["owner"]["sub"], "alice");
    assert_eq!(after["status"], "succeeded");
    record["key"] = json!("other");
    let res = put_as(&url, &alice, &record).await;
    assert_eq!(
        res.status(),
        StatusCode::BAD_REQUEST,
        "a changed key is refused"
    );

    let res = delete_as(&url, &alice).await;
    assert_eq!(res.status(), StatusCode::NO_CONTENT);
    assert!(
        s.files().iter().all(|f| !f.to_string_lossy().contains(id)),
        "marker and record are gone"
    );
}

/// PUT, DELETE and dismiss of an id that was never registered answer 404 and create nothing;
/// an id dated beyond the allowed clock skew is refused with 400.
#[tokio::test]
async fn only_real_ids_are_written() {
    let s = Server::start(&[]);
    let alice = s.token("alice", "acme", true);
    register(&s, &alice, "acme", "real").await;
    let before = s.files();
    let now_ms = now_secs() * 1000;
    let never = format!("{:013}_never", 9_999_999_999_999 - (now_ms - 5_000));
    let future = format!("{:013}_future", 9_999_999_999_999 - (now_ms + 3_600_000));
    for (id, want) in [
        (&never, StatusCode::NOT_FOUND),
        (&future, StatusCode::BAD_REQUEST),
    ] {
        let base = format!("/api/v1/workspaces/acme/items/{id}");
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
            let call = Call {
                method: method.clone(),
                path: path.clone(),
                body,
            };
            let (status, body) = send(&s, &call, Some(&alice)).await;
            assert_eq!(status, want, "{method} {path}: {body}");
        }
        let (status, body) =
            server_fn(&s, "dismiss", &[("ws", "acme"), ("id", id)], Some(&alice)).await;
        assert_eq!(status, want, "server fn dismiss {id}: {body}");
    }
    assert_eq!(s.files(), before, "nothing was created");
}

/// `before` is an id like any other: malformed or dated in the future, 400 `invalid_name`, on
/// both doors; a real one gives the next page.
#[tokio::test]
async fn recent_before_takes_a_real_id_and_gives_the_next_page() {
    let s = Server::start(&[]);
    let alice = s.token("alice", "acme", true);
    let older = register(&s, &alice, "acme", "older").await;
    let newer = register(&s, &alice, "acme", "newer").await;
    let page = |query: String| {
        let (url, alice) = (s.url.clone(), alice.clone());
        async move {
            let res = client()
                .get(format!("{url}/api/v1/workspaces/acme/recent?{query}"))
                .bearer_auth(&alice)
                .send()
                .await
                .unwrap();
            (res.status(), res.json::<Value>().await.unwrap())
        }
    };
    let (status, first) = page("cap=1".into()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(first["cards"][0]["id"], newer["id"]);
    assert_eq!(first["more"], true);
    let (status, next) = page(format!("cap=1&before={}", newer["id"].as_str().unwrap())).await;
    assert_eq!(status, StatusCode::OK, "{next}");
    assert_eq!(next["cards"][0]["id"], older["id"]);
    assert_eq!(next["more"], false);

    let now_ms = now_secs() * 1000;
    let future = format!("{:013}_future", 9_999_999_999_999 - (now_ms + 3_600_000));
    for bad in ["junk", "123_a", future.as_str()] {
        let (status, body) = page(format!("before={bad}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "before={bad}: {body}");
        assert_eq!(body["error"], "invalid_name", "before={bad}");
        let form = [("ws", "acme"), ("filter", "all"), ("before", bad)];
        let (status, body) = server_fn(&s, "recent", &form, Some(&alice)).await;
        assert_eq!(
            status,
            StatusCode::BAD_REQUEST,
            "server fn, before={bad}: {body}"
        );
    }
    let form = [("ws", "acme"), ("filter", "all"), ("cap", "1")];
    let form: Vec<(&str, &str)> = form
        .into_iter()
        .chain([("before", newer["id"].as_str().unwrap())])
        .collect();
    let (status, body) = server_fn(&s, "recent", &form, Some(&alice)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("\"more\":false") && body.contains(older["id"].as_str().unwrap()));
}

/// A token from `pickup token` with extra arguments (and the test secret).
fn token_with(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pickup"))
        .args(["token", "--sub", "alice", "--ws", "acme"])
        .args(args)
        .env("PICKUP_SECRET", SECRET)
        .env_remove("PICKUP_ISSUER")
        .env_remove("PICKUP_AUDIENCE")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[tokio::test]
async fn issuer_and_audience_are_checked_when_configured() {
    let s = Server::start(&[
        ("PICKUP_ISSUER", "https://idp.test"),
        ("PICKUP_AUDIENCE", "pickup"),
    ]);
    let recent = Call::get("/api/v1/workspaces/acme/recent".into());
    let cases = [
        (vec![], StatusCode::UNAUTHORIZED),
        (vec!["--iss", "https://idp.test"], StatusCode::UNAUTHORIZED),
        (vec!["--aud", "pickup"], StatusCode::UNAUTHORIZED),
        (
            vec!["--iss", "https://other.test", "--aud", "pickup"],
            StatusCode::UNAUTHORIZED,
        ),
        (
            vec!["--iss", "https://idp.test", "--aud", "pickup"],
            StatusCode::OK,
        ),
    ];
    for (args, want) in cases {
        let (got, body) = send(&s, &recent, Some(&token_with(&args))).await;
        assert_eq!(got, want, "{args:?}: {body}");
    }
}

/// The answer to a request sent by hand on a raw connection, read until the server closes it
/// (or `bound` passes: then `None`).
async fn read_until_closed(tcp: &mut tokio::net::TcpStream, bound: Duration) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    match tokio::time::timeout(bound, tcp.read_to_end(&mut got)).await {
        Ok(_) => Some(String::from_utf8_lossy(&got).to_string()),
        Err(_) => None,
    }
}

async fn half_sent_header(s: &Server) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let addr = s.url.trim_start_matches("http://");
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nX-Half: ").as_bytes())
        .await
        .unwrap();
    tcp
}

#[tokio::test]
async fn the_header_timeout_closes_a_connection_that_stalls_in_its_header() {
    let s = Server::start(&[("PICKUP_HEADER_TIMEOUT", "1s")]);
    // Before connecting: the server's timer starts no earlier than the connection.
    let started = std::time::Instant::now();
    let mut tcp = half_sent_header(&s).await;
    let answer = read_until_closed(&mut tcp, Duration::from_secs(10)).await;
    assert!(
        answer.is_some(),
        "the stalled connection was still open after 10 s"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "closed before the timeout: {:?}",
        started.elapsed()
    );
    // The server still answers others.
    let ok = client()
        .get(format!("{}/healthz", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_half_sent_request_does_not_keep_the_server_from_stopping() {
    // The header timeout is long: only the shutdown deadline can end the stalled connection.
    let mut s = Server::start(&[
        ("PICKUP_SHUTDOWN_GRACE", "1s"),
        ("PICKUP_HEADER_TIMEOUT", "10m"),
    ]);
    let _stalled = half_sent_header(&s).await;
    // Connections are accepted in order: once a later one is answered, the stalled one is the
    // server's.
    let ok = client()
        .get(format!("{}/healthz", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    let started = std::time::Instant::now();
    let status = s
        .terminate_within(Duration::from_secs(15))
        .expect("the server was still running 15 s after SIGTERM");
    assert!(status.success(), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_request_whose_body_stalls_gets_408_after_the_request_timeout() {
    use tokio::io::AsyncWriteExt;
    let s = Server::start(&[("PICKUP_REQUEST_TIMEOUT", "1s")]);
    let token = s.token("alice", "acme", true);
    let addr = s.url.trim_start_matches("http://");
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /api/v1/workspaces/acme/items HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{{\"key\""
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let answer = read_until_closed(&mut tcp, Duration::from_secs(10))
        .await
        .expect("no answer within 10 s");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}

#[tokio::test]
async fn connections_over_the_cap_wait_until_one_closes() {
    use tokio::io::AsyncWriteExt;
    let s = Server::start(&[("PICKUP_MAX_CONNECTIONS", "1")]);
    let addr = s.url.trim_start_matches("http://").to_string();
    // The one slot: a kept-alive connection, answered once, then idle.
    let mut first = tokio::net::TcpStream::connect(&addr).await.unwrap();
    first
        .write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut buf = [0u8; 1024];
    let n = tokio::io::AsyncReadExt::read(&mut first, &mut buf)
        .await
        .unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    let mut waiting = tokio::spawn({
        let url = s.url.clone();
        async move {
            client()
                .get(format!("{url}/healthz"))
                .send()
                .await
                .map(|r| r.status())
        }
    });
    // While the slot is taken the second is not served (a bound, not a sleep: it can only fail
    // if the cap is broken)...
    let early = tokio::time::timeout(Duration::from_millis(500), &mut waiting).await;
    assert!(
        early.is_err(),
        "served while the only slot was taken: {early:?}"
    );
    // ...and once the slot is free, it is.
    drop(first);
    let status = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("not served after the slot was freed")
        .unwrap()
        .unwrap();
    assert_eq!(status, StatusCode::OK);
}

/// A store that stops answering: a file store whose directory has become a file.
#[tokio::test]
async fn a_store_error_gives_a_generic_503_with_the_request_id_and_no_detail() {
    let root = tempfile::tempdir().unwrap();
    let store = root.path().join("store-dir-xyz");
    std::fs::create_dir(&store).unwrap();
    let s = Server::start(&[("PICKUP_STORE", &format!("file://{}", store.display()))]);
    let token = s.token("alice", "acme", true);
    std::fs::remove_dir_all(&store).unwrap();
    std::fs::write(&store, "not a directory").unwrap();

    // A generic 503 that names its request id and shows nothing of the store; the body.
    let check = |what: &'static str, res: reqwest::Response| async move {
        let status = res.status();
        let id = res.headers().get("x-request-id").cloned();
        let body = res.text().await.unwrap();
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{what}: {body}");
        let id = id.unwrap_or_else(|| panic!("{what}: no X-Request-Id"));
        let id = id.to_str().unwrap();
        assert!(!id.is_empty());
        assert!(body.contains(&format!("request id {id}")), "{what}: {body}");
        for detail in ["store-dir-xyz", "directory", "os error"] {
            assert!(!body.contains(detail), "{what} shows {detail:?}: {body}");
        }
        body
    };
    let res = client()
        .get(format!("{}/readyz", s.url))
        .send()
        .await
        .unwrap();
    let body = check("readyz", res).await;
    assert!(body.starts_with("store not answering"), "{body}");

    let res = client()
        .get(format!("{}/api/v1/workspaces/acme/recent", s.url))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    let body = check("REST recent", res).await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"],
        "store_unavailable"
    );

    // The other door, the widget's server function, answers the same way.
    let res = client()
        .post(format!("{}/api/recent", s.url))
        .bearer_auth(&token)
        .json(&serde_json::json!({"ws": "acme", "filter": "all"}))
        .send()
        .await
        .unwrap();
    check("server fn recent", res).await;
}

#[tokio::test]
async fn pages_carry_a_csp_and_api_answers_are_not_stored() {
    let s = Server::start(&[("PICKUP_FRAME_ANCESTORS", "'self'  https://host.test")]);
    let token = s.token("alice", "acme", false);
    let get = |path: &str| {
        client()
            .get(format!("{}{path}", s.url))
            .bearer_auth(&token)
            .send()
    };
    for path in ["/", "/index.html", "/pickup.js", "/embed.html"] {
        let res = get(path).await.unwrap();
        let h = res.headers();
        let csp = h
            .get("content-security-policy")
            .unwrap_or_else(|| panic!("{path}: no CSP"))
            .to_str()
            .unwrap();
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
            h.get("x-content-type-options").unwrap(),
            "nosniff",
            "{path}"
        );
        assert!(h.get("x-request-id").is_some(), "{path}");
    }
    for path in [
        "/api/v1/workspaces/acme/recent",
        "/api/v1/workspaces/beta/recent",
        "/readyz",
        "/api/nothing/here",
    ] {
        let res = get(path).await.unwrap();
        let h = res.headers();
        assert_eq!(
            h.get("cache-control").map(|v| v.to_str().unwrap()),
            Some("no-store"),
            "{path}"
        );
        assert_eq!(
            h.get("x-content-type-options").unwrap(),
            "nosniff",
            "{path}"
        );
        assert!(h.get("content-security-policy").is_none(), "{path}");
    }
    // A request id the caller sends comes back (a proxy's id keeps following the request).
    let res = client()
        .get(format!("{}/healthz", s.url))
        .header("x-request-id", "from-the-proxy-42")
        .send()
        .await
        .unwrap();
    assert_eq!(
        res.headers().get("x-request-id").unwrap(),
        "from-the-proxy-42"
    );
}

/// An If-Match that is present but unreadable (not visible ASCII, or empty) is 400 and
/// nothing is written: it is never taken for an absent one, which would be a plain write.
#[tokio::test]
async fn an_unreadable_if_match_is_refused_not_ignored() {
    let s = Server::start(&[]);
    let alice = s.token("alice", "acme", true);
    let item = register(&s, &alice, "acme", "cas").await;
    let id = item["id"].as_str().unwrap();
    let url = format!("{}/api/v1/workspaces/acme/items/{id}", s.url);
    let before = std::fs::read(
        s.files()
            .into_iter()
            .find(|f| f.to_string_lossy().ends_with(".json"))
            .unwrap(),
    )
    .unwrap();
    for bad in [&b"\x80\"etag\""[..], b"", b"\"v1.!!.x\""] {
        let value = reqwest::header::HeaderValue::from_bytes(bad).unwrap();
        let res = client()
            .put(&url)
            .bearer_auth(&alice)
            .header(reqwest::header::IF_MATCH, value)
            .json(&json!({"title": "overwritten", "status": "failed"}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{bad:?}");
        let e: Value = res.json().await.unwrap();
        assert_eq!(e["error"], "invalid_body");
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
