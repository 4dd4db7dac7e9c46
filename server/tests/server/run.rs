//! `pickup run` against the app served in this process, over real HTTP, the wrapper itself run
//! in this process too (`pickup::cli::run_on`, its output and words read from buffers). The
//! wrapped commands are `sh -c` scripts; where a test must act while one runs, the script waits
//! on a fifo the test writes to (no sleeps). Signals to the wrapper, and its output and errors
//! as a process's: `run_process.rs`.

use crate::common::cli::{self, Running};
use crate::common::client::token;
use crate::common::in_process::{Served, Serving};
use crate::common::wait::eventually;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};
use tokio_util::task::AbortOnDropHandle;

pub const WS: &str = "acme";

/// `pickup run`'s arguments for `script` (run by `sh -c`) as the item `key`, with short periods.
pub fn run_args<'a>(key: &'a str, extra: &[&'a str], script: &'a str) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--ws",
        WS,
        "--key",
        key,
        "--title",
        "Nightly training",
        "--heartbeat",
        "1s",
        "--progress-every",
        "50ms",
    ];
    args.extend_from_slice(extra);
    // A wrapper a failing test leaves behind gives up on its gone server soon.
    if !extra.contains(&"--finish-timeout") {
        args.extend_from_slice(&["--finish-timeout", "10s"]);
    }
    args.extend_from_slice(&["--", "sh", "-c", script]);
    args
}

pub fn writer() -> String {
    token("ci-bot", WS, true)
}

/// The newest card of `key` in the workspace, as a reader sees it.
pub async fn card(s: &Served, key: &str) -> Option<Value> {
    let page = s
        .client()
        .recent(&token("reader", WS, false), WS, "cap=50")
        .await;
    let card = page.cards.into_iter().find(|c| c.key == key)?;
    Some(serde_json::to_value(card).unwrap())
}

/// Waits until `key`'s card satisfies `ok`.
pub async fn card_until(s: &Served, key: &str, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
    let what = format!("{key}: {what}");
    eventually(&what, async || match card(s, key).await {
        Some(c) if ok(&c) => Ok(c),
        last => Err(format!("last seen {last:?}")),
    })
    .await
}

/// A fifo a script reads a line from (`read x < GATE`): it waits until [`Gate::open`]. One
/// read per gate: a second `read` of the same fifo could open it while the first writer still
/// has it open, and pass on its end of file.
pub struct Gate {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Gate {
    pub fn new() -> Gate {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gate");
        assert!(Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap()
            .success());
        Gate { _dir: dir, path }
    }

    /// Lets the script's next `read` through (from a blocking thread: an open of a fifo waits
    /// until the script opens it too).
    pub async fn open_async(&self) {
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || {
            std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .unwrap()
                .write_all(b"go\n")
                .unwrap()
        })
        .await
        .unwrap();
    }

    /// `read x < "PATH"`: the script's wait on this gate.
    pub fn read(&self) -> String {
        format!("read x < \"{}\"", self.path.display())
    }
}

/// A failing test leaves no script waiting for ever: whatever waits on the gate is let through
/// (a non-blocking open finds no reader, and does nothing, otherwise).
impl Drop for Gate {
    fn drop(&mut self) {
        use std::os::unix::fs::OpenOptionsExt;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&self.path)
        {
            let _ = f.write_all(b"go\n");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_passes_output_through_unchanged_and_finishes_succeeded() {
    let s = Served::start(&[]);
    let script = r#"echo one; echo "pickup:progress 0.5"; printf 'two\r\n\377bytes\nno newline'"#;
    let ran = cli::producer(&s.url, &writer(), &run_args("ok", &[], script)).await;
    assert!(ran.exited(0), "{:?} {}", ran.code, ran.err);
    assert_eq!(
        ran.out, b"one\npickup:progress 0.5\ntwo\r\n\xffbytes\nno newline",
        "stdout byte for byte, progress lines included"
    );
    assert_eq!(ran.err, "", "nothing to say when all goes well");
    let c = card(&s, "ok").await.expect("the item is registered");
    assert_eq!(c["status"], "succeeded");
    assert_eq!(c["title"], "Nightly training");
    assert_eq!(c["progress"], 0.5);
    assert_eq!(c["owner"]["sub"], "ci-bot");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_of_a_failing_command_fails_the_item_with_the_code_and_exits_with_it() {
    let s = Served::start(&[]);
    let ran = cli::producer(&s.url, &writer(), &run_args("bad", &[], "exit 3")).await;
    assert!(ran.exited(3), "{:?}", ran.code);
    assert_eq!(ran.err, "", "the wrapper has nothing to say of it");
    let c = card(&s, "bad").await.unwrap();
    assert_eq!(c["status"], "failed");
    assert_eq!(c["title"], "Nightly training (exit 3)");

    // A command that cannot start is 127, as in a shell, and registers nothing.
    let args = [
        "run",
        "--ws",
        WS,
        "--key",
        "missing",
        "--title",
        "T",
        "--",
        "no-such-command-here",
    ];
    let ran = cli::producer(&s.url, &writer(), &args).await;
    assert!(ran.exited(127), "{:?}", ran.code);
    assert!(
        ran.err.contains("cannot start no-such-command-here"),
        "{}",
        ran.err
    );
    assert!(card(&s, "missing").await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_reports_progress_from_output_lines_and_from_the_progress_file() {
    let s = Served::start(&[]);
    let (gate, gate2) = (Gate::new(), Gate::new());
    let script = format!(
        r#"echo "pickup:progress 0.42"; {}; echo 0.8 > "$PICKUP_PROGRESS_FILE"; {}; echo done"#,
        gate.read(),
        gate2.read()
    );
    let running = Running::producer(&s.url, &writer(), &run_args("progress", &[], &script));
    let first = card_until(&s, "progress", "at 0.42 from the output line", |c| {
        c["status"] == "running" && c["progress"] == 0.42
    })
    .await;
    // Nothing new to say while the command waits: the heartbeat (1 s here) still updates it.
    card_until(&s, "progress", "updated by a heartbeat", |c| {
        c["updated_at"] != first["updated_at"] && c["progress"] == 0.42
    })
    .await;
    gate.open_async().await;
    card_until(&s, "progress", "at 0.8 from the file", |c| {
        c["status"] == "running" && c["progress"] == 0.8
    })
    .await;
    gate2.open_async().await;
    let ran = running.ended().await;
    assert!(ran.exited(0), "{:?}", ran.code);
    assert_eq!(ran.stdout(), "pickup:progress 0.42\ndone\n");
    let c = card(&s, "progress").await.unwrap();
    assert_eq!(c["status"], "succeeded");
    assert_eq!(c["progress"], 0.8);
}

/// The first progress a command reports reaches the card at once, even when it comes just
/// after the registration (which carried none): the registration is no progress sent, so the
/// throttle (a minute here, as is the heartbeat: far longer than the test waits) does not hold it
/// back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_sends_its_first_progress_at_once_after_the_registration() {
    let s = Served::start(&[]);
    let (registered, done) = (Gate::new(), Gate::new());
    let script = format!(
        r#"{}; echo "pickup:progress 0.5"; {}; exit 3"#,
        registered.read(),
        done.read()
    );
    // The throttle's period and the heartbeat a minute: only the progress itself can bring 0.5.
    let mut args = run_args("first", &[], &script);
    for flag in ["--progress-every", "--heartbeat"] {
        let at = args.iter().position(|a| *a == flag).unwrap();
        args[at + 1] = "60s";
    }
    let running = Running::producer(&s.url, &writer(), &args);
    card_until(&s, "first", "registered, with no progress", |c| {
        c["status"] == "running" && c["progress"].is_null()
    })
    .await;
    registered.open_async().await;
    card_until(&s, "first", "at 0.5 while running", |c| {
        c["status"] == "running" && c["progress"] == 0.5
    })
    .await;
    done.open_async().await;
    let ran = running.ended().await;
    assert!(ran.exited(3), "{:?}", ran.code);
    let c = card(&s, "first").await.unwrap();
    assert_eq!(
        (&c["status"], &c["progress"]),
        (&json!("failed"), &json!(0.5))
    );
}

/// A loopback address nothing listens on (yet).
pub fn free_addr() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_with_the_server_down_at_start_runs_the_command_and_registers_once_it_answers() {
    let addr = free_addr();
    let url = format!("http://{addr}");
    let gate = Gate::new();
    let script = format!("echo started; {}; exit 4", gate.read());
    let running = Running::producer(&url, &writer(), &run_args("down", &[], &script));
    // The command runs while the server is down.
    running.printed(b"started\n").await;
    let warning = running.said("cannot register the item").await;
    assert!(warning.contains("keeps trying"), "{warning}");

    let s = tokio::task::block_in_place(|| Serving::new(&[]).at(&addr).start());
    card_until(&s, "down", "registered as running", |c| {
        c["status"] == "running"
    })
    .await;
    gate.open_async().await;
    let ran = running.ended().await;
    assert!(ran.exited(4), "the command's own status: {:?}", ran.code);
    let c = card(&s, "down").await.unwrap();
    assert_eq!(c["status"], "failed");
    assert_eq!(c["title"], "Nightly training (exit 4)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_whose_command_ends_while_the_server_is_down_finishes_the_item_once_it_answers() {
    let addr = free_addr();
    let url = format!("http://{addr}");
    let args = run_args("late", &["--finish-timeout", "60s"], "echo ended");
    let running = Running::producer(&url, &writer(), &args);
    running.said("cannot register the item").await;
    // The command's last words, before any server answers.
    running.printed(b"ended\n").await;
    let s = tokio::task::block_in_place(|| Serving::new(&[]).at(&addr).start());
    let ran = running.ended().await;
    assert!(ran.exited(0), "{:?}", ran.code);
    assert!(ran.err.contains("answers again; item"), "{}", ran.err);
    let c = card(&s, "late")
        .await
        .expect("registered once the server answered");
    assert_eq!(c["status"], "succeeded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_gives_up_finishing_after_the_finish_timeout_and_exits_with_the_command_status() {
    let url = format!("http://{}", free_addr());
    let started = Instant::now();
    let args = run_args("never", &["--finish-timeout", "1s"], "exit 5");
    let ran = cli::producer(&url, &writer(), &args).await;
    assert!(ran.exited(5), "{:?}", ran.code);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        ran.err.contains("gave up finishing the item after 1s")
            && ran.err.contains("never registered"),
        "{}",
        ran.err
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_against_a_server_that_never_answers_exits_when_the_finish_timeout_is_over() {
    // Accepts connections and reads nothing, answers nothing.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming() {
            held.push(conn);
        }
    });
    let started = Instant::now();
    let args = run_args("silent", &["--finish-timeout", "1s"], "exit 0");
    let ran = cli::producer(&url, &writer(), &args).await;
    assert!(ran.exited(0), "{:?}", ran.code);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "a hanging request does not hold the wrapper past its finish timeout: {:?}",
        started.elapsed()
    );
    assert!(
        ran.err.contains("gave up finishing the item after 1s"),
        "{}",
        ran.err
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_refused_by_the_server_still_runs_the_command() {
    let s = Served::start(&[]);
    let reader = token("reader", WS, false);
    let args = run_args("refused", &[], "echo still-ran; exit 0");
    let ran = cli::producer(&s.url, &reader, &args).await;
    assert!(ran.exited(0), "{:?}", ran.code);
    assert_eq!(ran.stdout(), "still-ran\n");
    assert!(
        ran.err.contains("(403)") && ran.err.contains("unreported"),
        "{}",
        ran.err
    );
    assert!(card(&s, "refused").await.is_none());
}

/// What [`proxy`] does to one request of the wrapper's; everything else is passed through.
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    /// The first `POST` is passed on; once the server starts answering (so it was applied),
    /// the connection is closed instead of passing the answer back.
    LoseFirstPostAnswer,
    /// The first `POST` is refused (400), as a server in trouble may (a stepped clock, an
    /// upgrade half-way): a refusal that heals. (A connection's first request only: the wrapper
    /// registers first.)
    RefuseFirstPost,
}

/// A proxy to `upstream` that does `fault` once, until the handle is dropped (then its
/// listener and every connection through it end).
async fn proxy(upstream: String, fault: Fault) -> (String, AbortOnDropHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let lose = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let task = tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        loop {
            let (client, _) = listener.accept().await.unwrap();
            let upstream = upstream.clone();
            let lose = lose.clone();
            while connections.try_join_next().is_some() {}
            connections.spawn(async move {
                let (mut from_client, mut to_client) = client.into_split();
                let mut first = vec![0; 64 * 1024];
                let n = from_client.read(&mut first).await.unwrap_or(0);
                let first = &first[..n];
                let hit = first.starts_with(b"POST ")
                    && lose.swap(false, std::sync::atomic::Ordering::SeqCst);
                if hit && fault == Fault::RefuseFirstPost {
                    // Answered here: the server never sees it.
                    let body = r#"{"error":"invalid_body","message":"not now"}"#;
                    let answer = format!(
                        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = to_client.write_all(answer.as_bytes()).await;
                    return;
                }
                let server = tokio::net::TcpStream::connect(&upstream).await.unwrap();
                let (mut from_server, mut to_server) = server.into_split();
                to_server.write_all(first).await.unwrap();
                let up = AbortOnDropHandle::new(tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut from_client, &mut to_server).await;
                }));
                if hit {
                    let mut answer = [0u8; 1];
                    let _ = from_server.read(&mut answer).await;
                    up.abort();
                    return; // both connections close: the client never hears the answer
                }
                let _ = tokio::io::copy(&mut from_server, &mut to_client).await;
                up.abort();
            });
        }
    });
    (url, AbortOnDropHandle::new(task))
}

/// `pickup run` of a command that waits on a gate, as `key`, through a [`proxy`] that does
/// `fault`; the gate opens once the wrapper has said each of `lines` (in order), so what the
/// test checks happened while the command ran. How it ended, and the lines that said them.
async fn run_through(
    s: &Served,
    fault: Fault,
    key: &'static str,
    lines: &'static [&'static str],
) -> (cli::Ran, Vec<String>) {
    let upstream = s.url.trim_start_matches("http://").to_string();
    let (proxy, _proxying) = proxy(upstream, fault).await;
    let gate = Gate::new();
    let script = gate.read();
    let running = Running::producer(&proxy, &writer(), &run_args(key, &[], &script));
    let mut said = Vec::new();
    for line in lines {
        said.push(running.said(line).await);
    }
    gate.open_async().await;
    (running.ended().await, said)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_whose_registration_answer_was_lost_adopts_the_item_instead_of_making_a_second() {
    let s = Served::start(&[]);
    // The command waits until the wrapper has lost the answer, so the retry is the wrapper's
    // own (not a finish that found the registration still in flight).
    let lines = &["cannot register the item"];
    let (ran, said) = run_through(&s, Fault::LoseFirstPostAnswer, "lost", lines).await;
    assert!(ran.exited(0), "{:?}", ran.code);
    assert!(said[0].contains("no answer from"), "{said:?}");
    let records: Vec<_> = s
        .files()
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("/ws/acme/items/"))
        .collect();
    assert_eq!(records.len(), 1, "one item, not two: {records:?}");
    let c = card(&s, "lost").await.unwrap();
    assert_eq!(c["status"], "succeeded");
}

/// The TTL deletes a run by its name, heartbeats or not: `pickup run` registers a new run of
/// its key half-way there (the server says how long is left: `Pickup-Expires-In`), carrying
/// its progress, so a command that runs longer than the TTL keeps its card and its outcome.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_longer_than_the_ttl_renews_its_run_and_keeps_its_card() {
    const TTL: Duration = Duration::from_secs(4);
    let s = Served::start(&["--ttl", "4s"]);
    let gate = Gate::new();
    let script = format!(r#"echo "pickup:progress 0.5"; {}"#, gate.read());
    let running = Running::producer(&s.url, &writer(), &run_args("long", &[], &script));
    let first = card_until(&s, "long", "running at 0.5", |c| c["progress"] == 0.5).await;
    let registered = Instant::now();
    // Every read prunes what it finds dead: the card must be there at each one until well
    // past the first run's TTL (two renewals), and carry the progress.
    let mut ids = BTreeSet::from([first["id"].to_string()]);
    while registered.elapsed() < TTL + TTL / 2 {
        let c = card(&s, "long").await.expect("the card is there all along");
        assert_eq!(
            (&c["status"], &c["progress"]),
            (&json!("running"), &json!(0.5))
        );
        ids.insert(c["id"].to_string());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ids.len() >= 2, "renewed at least once: {ids:?}");
    gate.open_async().await;
    let ran = running.ended().await;
    assert!(ran.exited(0), "{:?}", ran.code);
    assert_eq!(ran.err, "", "nothing to say when all goes well");
    let c = card(&s, "long").await.expect("the outcome is recorded");
    assert_eq!(
        (&c["status"], &c["progress"]),
        (&json!("succeeded"), &json!(0.5))
    );
}

/// A refusal that may heal (a 400 here, as from a server whose clock was stepped; a 409, a
/// 412) while the command runs is said once and tried again with back-off: the item is kept
/// up to date once the server accepts again, and its outcome is recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_refused_for_a_while_keeps_reporting_once_the_server_heals() {
    let s = Served::start(&[]);
    let lines = &["cannot register the item", "answers again"];
    let (ran, said) = run_through(&s, Fault::RefuseFirstPost, "healed", lines).await;
    assert!(ran.exited(0), "{:?}", ran.code);
    assert!(said[0].contains("in case the server heals"), "{said:?}");
    assert!(said[1].contains("is up to date"), "{said:?}");
    let c = card(&s, "healed").await.unwrap();
    assert_eq!(c["status"], "succeeded");
}
