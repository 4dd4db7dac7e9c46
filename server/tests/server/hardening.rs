//! What a peer sends back, against the producer's CLI (`pickup item`, `pickup run`, in this
//! process where its answer is the point, as a process where its memory or environment is):
//! hostile loopback servers made here (a redirect to another port, a 1 GiB chunked body
//! streamed lazily, an error message with terminal escapes), and the environment the wrapped
//! command gets.

use crate::common::cli;
use crate::common::client::path;
use crate::common::in_process::{Listening, Served};
use axum::body::Body;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures::StreamExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

const WS: &str = "acme";
const GIB: u64 = 1 << 30;

/// An axum app on a free loopback port, until dropped.
async fn serve(app: axum::Router) -> Listening {
    Listening::start(app).await
}

/// `len` bytes of spaces, chunked, made as they are sent (one 64 KiB buffer shared by every
/// chunk), counting what was sent into `sent`.
fn lazy_body(len: u64, sent: Arc<AtomicU64>) -> Body {
    const CHUNK: u64 = 64 * 1024;
    let chunk = Bytes::from(vec![b' '; CHUNK as usize]);
    let stream = futures::stream::repeat(chunk)
        .take((len / CHUNK) as usize)
        .map(move |c| {
            sent.fetch_add(c.len() as u64, Ordering::SeqCst);
            Ok::<_, std::convert::Infallible>(c)
        });
    Body::from_stream(stream)
}

/// `pickup ARGS` as a producer on `url`, nothing of the calling environment's Pickup settings.
fn producer(url: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pickup"));
    cmd.args(args)
        .env("PICKUP_URL", url)
        .env("PICKUP_TOKEN", "the-token")
        .env("PICKUP_LOG", "error")
        .env_remove("PICKUP_SECRET")
        .env_remove("PICKUP_STORE")
        .env_remove("PICKUP_PROGRESS_FILE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Runs `cmd` to its end: exit code, stdout, stderr, and its peak resident memory in KiB.
fn run_measured(cmd: Command) -> (Option<i32>, String, String, i64) {
    // The peak is the child's own, measured by a parent that is not this test process:
    // Linux counts a child's resident set from before its exec, and a child spawned from the
    // suite's one test binary (hundreds of MB, sharing its memory until exec) would carry the
    // binary's peak. python3 waits for the command and prints its peak (RUSAGE_CHILDREN).
    const WRAP: &str = "import resource, subprocess, sys\n\
        code = subprocess.run(sys.argv[1:]).returncode\n\
        sys.stderr.write('\\nmaxrss_kib=%d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n\
        sys.exit(code if code >= 0 else 128 - code)\n";
    let mut wrapped = Command::new("python3");
    wrapped
        .args(["-c", WRAP])
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => wrapped.env(k, v),
            None => wrapped.env_remove(k),
        };
    }
    let out = wrapped.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let (stderr, maxrss) = stderr
        .rsplit_once("\nmaxrss_kib=")
        .map(|(rest, kib)| (rest.to_string(), kib.trim().parse().unwrap()))
        .unwrap_or_else(|| panic!("no peak from the wrapper: {stderr}"));
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    (out.status.code(), stdout, stderr, maxrss)
}

/// An item record as the API answers it, with `id`.
fn record(id: &str) -> serde_json::Value {
    serde_json::json!({
        "id": id, "ws": WS, "key": "k", "title": "T", "url": null, "status": "running",
        "progress": null, "owner": {"sub": "b", "name": "B"},
        "created_at": "2026-12-01T00:00:00Z", "updated_at": "2026-12-01T00:00:00Z",
        "heartbeat_at": "2026-12-01T00:00:00Z", "finished_at": null
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_another_origin_is_an_error_and_the_token_stays_home() {
    // B: what the redirect points at. It notes every Authorization it gets and answers as
    // Pickup would (and redirects to itself once, as the review's B did).
    let seen: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let b_seen = seen.clone();
    let b_peer = serve(axum::Router::new().fallback(move |headers: HeaderMap| {
        let seen = b_seen.clone();
        async move {
            let auth = headers
                .get(header::AUTHORIZATION)
                .map(|v| v.to_str().unwrap().to_string());
            let first = {
                let mut seen = seen.lock().unwrap();
                seen.push(auth);
                seen.len() == 1
            };
            if first {
                (
                    StatusCode::TEMPORARY_REDIRECT,
                    [(header::LOCATION, "/again")],
                )
                    .into_response()
            } else {
                (StatusCode::CREATED, axum::Json(record("0000000000000_k"))).into_response()
            }
        }
    }))
    .await;
    let b = b_peer.url.clone();
    let to = format!("{b}{}", path::items(WS));
    let a_peer = serve(axum::Router::new().fallback(move || {
        let to = to.clone();
        async move { (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, to)]) }
    }))
    .await;
    let a = a_peer.url.clone();
    let args = ["item", "start", "--ws", WS, "--key", "k", "--title", "T"];
    let ran = cli::producer(&a, "the-token", &args).await;
    assert_eq!(ran.stdout(), "", "no id printed");
    let said = ran.refusal();
    assert!(
        said.contains("redirected (307) to") && said.contains(&b),
        "names where it pointed: {said}"
    );
    assert!(
        seen.lock().unwrap().is_empty(),
        "the other origin got nothing, token least of all: {:?}",
        seen.lock().unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_1_gib_answer_is_refused_while_it_is_read_error_or_success() {
    for status in [StatusCode::FORBIDDEN, StatusCode::OK] {
        let sent = Arc::new(AtomicU64::new(0));
        let counter = sent.clone();
        let peer = serve(axum::Router::new().fallback(move || {
            let sent = counter.clone();
            async move {
                let mut res = Response::new(lazy_body(GIB, sent));
                *res.status_mut() = status;
                res
            }
        }))
        .await;
        let url = peer.url.clone();
        let (code, _, stderr, max_rss_kib) =
            run_measured(producer(&url, &["item", "get", "--ws", WS, "some_id"]));
        let sent = sent.load(Ordering::SeqCst);
        eprintln!(
            "pickup item get against a 1 GiB {status}: VmHWM {} KiB, {} bytes sent before it stopped reading",
            max_rss_kib, sent
        );
        assert_eq!(code, Some(1), "{stderr}");
        let limit = if status.is_success() {
            "1048576"
        } else {
            "65536"
        };
        assert!(stderr.contains(limit), "names the limit: {stderr}");
        if !status.is_success() {
            assert!(stderr.contains("(403)"), "{stderr}");
        }
        assert!(max_rss_kib < 64 * 1024, "peak memory {max_rss_kib} KiB");
        assert!(sent < GIB / 8, "stopped reading: {sent} bytes sent");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_message_is_printed_with_its_control_characters_escaped() {
    let peer = serve(axum::Router::new().fallback(|| async {
        let message = "\u{1b}[2J\u{1b}]0;owned\u{7}all good\r\nid: 1234\u{202E}txt.exe";
        (
            StatusCode::BAD_REQUEST,
            axum::Json(serde_json::json!({"error": "invalid_body", "message": message})),
        )
    }))
    .await;
    let url = peer.url.clone();
    let ran = cli::producer(&url, "the-token", &["item", "get", "--ws", WS, "x"]).await;
    let stderr = ran.refusal();
    for raw in ['\u{1b}', '\r', '\u{7}', '\u{202E}'] {
        assert!(!stderr.contains(raw), "raw {raw:?} in {stderr:?}");
    }
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr:?}");
    assert!(
        stderr.contains(r"\u{1b}[2J\u{1b}]0;owned\u{7}all good\r\nid: 1234\u{202e}txt.exe"),
        "{stderr:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wrapped_command_gets_no_credential_unless_asked() {
    let s = Served::start(&[]);
    let token = crate::common::client::token("ci-bot", WS, true);
    let env_of = |extra: &[&str]| {
        let mut args = vec!["run", "--ws", WS, "--key", "env", "--title", "Env"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", "sh", "-c", "env"]);
        let mut cmd = producer(&s.url, &args);
        cmd.env("PICKUP_TOKEN", &token)
            .env("PICKUP_SECRET", "the-secret")
            .env("PICKUP_STORE", "s3://bucket?secret_access_key=k");
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let env = env_of(&[]);
    for name in ["PICKUP_TOKEN", "PICKUP_SECRET", "PICKUP_STORE"] {
        assert!(!env.contains(&format!("{name}=")), "{name} passed: {env}");
    }
    assert!(env.contains("PICKUP_PROGRESS_FILE="), "{env}");
    let env = env_of(&["--pass-credentials"]);
    assert!(env.contains(&format!("PICKUP_TOKEN={token}")), "{env}");
    assert!(env.contains("PICKUP_SECRET=the-secret"), "{env}");
    let help = producer(&s.url, &["run", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("--pass-credentials"));
}
