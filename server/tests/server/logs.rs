//! What a real `pickup serve` writes to its log (a process: its log on standard error is its
//! own), text and JSON: the request's id in every line of its span, never an id a client forged,
//! no terminal colours in a file, and what operators must be told.

use crate::common::client::TestClient;
use crate::common::server::Server;
use axum::http::StatusCode;

#[tokio::test]
async fn json_logs_are_one_object_per_line_with_the_request_id() {
    // No index.html in its site: the server warns before it says it listens. tower_http at
    // debug logs each answer, inside the request's span (at info), before the answer is sent.
    let s = Server::start(&[
        ("PICKUP_LOG", "info,tower_http=debug"),
        ("PICKUP_LOG_FORMAT", "json"),
    ]);
    let res = s
        .client()
        .get("/healthz")
        .header("x-request-id", "trace-me-42")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);
    let log = s.log();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let warning = lines
        .iter()
        .find(|l| {
            l["fields"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("no index.html"))
        })
        .unwrap_or_else(|| panic!("no warning about the site: {log}"));
    assert_eq!(warning["level"], "WARN");
    assert!(warning["timestamp"].is_string() && warning["fields"]["site"].is_string());
    let answered = lines
        .iter()
        .find(|l| l["span"]["request_id"] == "trace-me-42")
        .unwrap_or_else(|| panic!("no line in the request's span: {log}"));
    assert_eq!(answered["span"]["uri"], "/healthz");

    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_pickup"))
        .args(["token", "--sub", "a", "--ws", "acme"])
        .env("PICKUP_LOG_FORMAT", "xml")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        stderr.contains("PICKUP_LOG_FORMAT") || stderr.contains("--log-format"),
        "{stderr}"
    );
    assert!(
        stderr.contains("json") && stderr.contains("text"),
        "{stderr}"
    );
}

/// A text log to a file: plain (no colour codes), the site warning, a request id that is not
/// short visible ASCII replaced and never logged (a usable one kept), and a stored object larger
/// than any record named with the limit it broke.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_logs_are_plain_and_log_no_forged_request_id() {
    let s = Server::start(&[
        ("PICKUP_LOG", "info,tower_http=debug"),
        ("PICKUP_READ_CACHE", "0s"),
    ]);
    let c = s.client();
    let id_of = |sent: String| {
        let c = c.clone();
        async move {
            let res = c.get("/healthz").header("x-request-id", sent).send().await;
            assert_eq!(res.status, StatusCode::OK);
            res.header("x-request-id").unwrap().to_string()
        }
    };
    let forged = r#"1234 request_id=forged error="all good""#;
    for sent in [forged.to_string(), "a".repeat(30_000), "a".repeat(129)] {
        let got = id_of(sent.clone()).await;
        assert_ne!(got, sent);
        assert!(uuid_like(&got), "a fresh UUID: {got:?}");
    }
    let kept = "a".repeat(128);
    assert_eq!(id_of(kept.clone()).await, kept, "a usable id is kept");
    assert_eq!(id_of("req-42".into()).await, "req-42");
    too_large_object(&s).await;
    let log = s.log();
    assert!(log.contains("request_id=req-42"), "{log}");
    assert!(!log.contains("forged"), "{log}");
    assert!(
        !log.contains(&"a".repeat(129)),
        "the 30 KB id is in the log"
    );
    assert!(log.contains("no index.html"), "{log}");
    assert!(log.contains("more than the 1048576"), "{log}");
    assert!(
        !log.contains('\u{1b}'),
        "ANSI escapes in a log file: {log:?}"
    );
}

fn uuid_like(s: &str) -> bool {
    s.len() == 36 && s.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}

/// A record as big as no record is: refused with a 503 (its log line is the caller's to check).
async fn too_large_object(s: &Server) {
    const WS: &str = "acme";
    let token = s.token("ci-bot", WS, true);
    let c: TestClient = s.client();
    let res = c
        .registered(
            &token,
            WS,
            &serde_json::json!({"key": "big", "title": "Big"}),
        )
        .await;
    assert_eq!(res.status, StatusCode::CREATED);
    let rec: serde_json::Value = res.value();
    let id = rec["id"].as_str().unwrap();
    // The same record after 2 MiB of spaces: still valid JSON, so only a bound refuses it.
    let path = s.dir.path().join(format!("ws/{WS}/items/{id}.json"));
    let mut big = vec![b' '; 2 << 20];
    big.extend(serde_json::to_vec(&rec).unwrap());
    std::fs::write(&path, big).unwrap();
    let res = c.item(&token, WS, id).await;
    assert_eq!(res.status, StatusCode::SERVICE_UNAVAILABLE);
}
