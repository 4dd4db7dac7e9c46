//! The contract over HTTP: the app in this process (`oneshot`, or served on a loopback port
//! where a raw connection, the accept loop's limits, a shutdown or two servers on one store are
//! the point).

use crate::common::client::{now_secs, signed, token, Answer, TestClient};
use crate::common::in_process::{InProcess, Served};
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::Duration;

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
        for path in [
            format!("/api/v1/workspaces/{ws}/items"),
            format!("/api/v1/workspaces/{ws}/recent"),
        ] {
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
        let path = format!("/api/v1/workspaces/acme/items/{bad_id}");
        let (got, body) = c.send(Method::GET, &path, Some(&token), None).await;
        assert_eq!(
            (got, body["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_name")),
            "id {bad_id:?}"
        );
    }
    let post = |body: String| {
        c.post("/api/v1/workspaces/acme/items")
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
        .request(Method::PUT, &format!("/api/v1/workspaces/acme/items/{id}"))
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
        "POST /api/v1/workspaces/acme/items HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
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
        c.request(Method::OPTIONS, "/api/recent")
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
        .get("/api/v1/workspaces/acme/recent")
        .bearer(&reader)
        .header("origin", "http://evil.test")
        .send()
        .await;
    assert!(get.header("access-control-allow-origin").is_none());
    // A page on an allowed origin may read what a write answers: the ETag (of a GET, for the
    // If-Match of an update), the request id, and how long until the TTL deletes the run.
    let writer = token("alice", "acme", true);
    let registered = c
        .post("/api/v1/workspaces/acme/items")
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
    for header in ["x-request-id", "pickup-expires-in"] {
        assert!(registered.headers.contains_key(header), "{header} not sent");
    }
    for header in ["etag", "x-request-id", "pickup-expires-in"] {
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
                .get("/api/v1/workspaces/acme/recent?cap=1")
                .bearer(&token)
                .header("origin", "http://allowed.test")
                .send()
                .await;
            assert_eq!(page.status, StatusCode::OK);
            let exposed = page
                .header("access-control-expose-headers")
                .map(str::to_ascii_lowercase)
                .unwrap_or_default();
            for header in ["pickup-viewer", "pickup-token-expires"] {
                assert!(
                    exposed.contains(header),
                    "{header} not exposed: {exposed:?}"
                );
            }
            let viewer = page.header("pickup-viewer").map(str::to_string);
            let expires = page.header("pickup-token-expires").map(str::to_string);
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_during_a_burst_keeps_every_acknowledged_registration() {
    let mut s = Served::start(&[]);
    let token = token("alice", "acme", true);
    let (acked_tx, mut acked_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let c = TestClient::url(&s.url);
    let mut tasks = Vec::new();
    for i in 0..300 {
        let (c, token, tx) = (c.clone(), token.clone(), acked_tx.clone());
        tasks.push(tokio::spawn(async move {
            let body = json!({"key": format!("k{i}"), "title": "t"});
            let res = c
                .post("/api/v1/workspaces/acme/items")
                .bearer(&token)
                .json(&body)
                .try_send()
                .await;
            if let Ok(res) = res {
                if res.status == StatusCode::CREATED {
                    tx.send(res.value()["id"].as_str().unwrap().to_string())
                        .unwrap();
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
    s.stop().await;
    for t in tasks {
        t.await.unwrap();
    }
    while let Ok(id) = acked_rx.try_recv() {
        acked.push(id);
    }
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
        "a shutdown during a burst: {} of 300 registrations acknowledged, all present",
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
    let reader = Served::start(&["--read-cache", "250ms"]);
    let writer = Served::start_on(&reader.store_url(), &[]);
    let token = token("alice", "acme", true);
    let (to_reader, to_writer) = (TestClient::url(&reader.url), TestClient::url(&writer.url));
    let recent = || async {
        let page = to_reader.recent(&token, "acme", "").await;
        page.cards.into_iter().map(|c| c.title).collect::<Vec<_>>()
    };
    to_reader.register(&token, "acme", "before").await;
    assert_eq!(
        recent().await,
        vec!["item before"],
        "the reader's cache is warm"
    );

    to_writer.register(&token, "acme", "after").await;
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
        let path = "/api/v1/workspaces/acme/recent";
        let (got, body) = c
            .send(Method::GET, path, Some(&token_with(iss, aud)), None)
            .await;
        assert_eq!(got, want, "{iss:?} {aud:?}: {body}");
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

async fn half_sent_header(s: &Served) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let addr = s.addr();
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nX-Half: ").as_bytes())
        .await
        .unwrap();
    tcp
}

#[tokio::test]
async fn the_header_timeout_closes_a_connection_that_stalls_in_its_header() {
    let s = Served::start(&["--header-timeout", "1s"]);
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
    let c = TestClient::url(&s.url);
    assert_eq!(c.status("/healthz").await, StatusCode::OK);
}

#[tokio::test]
async fn a_half_sent_request_does_not_keep_the_server_from_stopping() {
    // The header timeout is long: only the shutdown deadline can end the stalled connection.
    let mut s = Served::start(&["--shutdown-grace", "1s", "--header-timeout", "10m"]);
    let _stalled = half_sent_header(&s).await;
    // Connections are accepted in order: once a later one is answered, the stalled one is the
    // server's.
    let c = TestClient::url(&s.url);
    assert_eq!(c.status("/healthz").await, StatusCode::OK);
    let started = std::time::Instant::now();
    tokio::time::timeout(Duration::from_secs(15), s.stop())
        .await
        .expect("the server was still running 15 s after it was told to stop");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_request_whose_body_stalls_gets_408_after_the_request_timeout() {
    use tokio::io::AsyncWriteExt;
    let s = Served::start(&["--request-timeout", "1s"]);
    let token = token("alice", "acme", true);
    let addr = s.addr();
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
    let s = Served::start(&["--max-connections", "1"]);
    let addr = s.addr().to_string();
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
        let c = TestClient::url(&s.url);
        async move { c.get("/healthz").try_send().await.map(|r| r.status) }
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

#[tokio::test]
async fn pages_carry_a_csp_and_api_answers_are_not_stored() {
    let s = InProcess::start(&["--frame-ancestors", "'self'  https://host.test"]).await;
    let c = s.client();
    let token = token("alice", "acme", false);
    let get = |path: &'static str| c.get(path).bearer(&token).send();
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
    for path in [
        "/api/v1/workspaces/acme/recent",
        "/api/v1/workspaces/beta/recent",
        "/readyz",
        "/api/nothing/here",
    ] {
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

/// An If-Match that is present but unreadable (not visible ASCII, or empty) is 400 and
/// nothing is written: it is never taken for an absent one, which would be a plain write.
#[tokio::test]
async fn an_unreadable_if_match_is_refused_not_ignored() {
    let s = InProcess::start(&[]).await;
    let c = s.client();
    let alice = token("alice", "acme", true);
    let id = c.register(&alice, "acme", "cas").await.id;
    let path = format!("/api/v1/workspaces/acme/items/{id}");
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
