//! `pickup run` and `pickup item` (child processes: the producer's process is the point)
//! against the app served in this process, over real HTTP. The wrapped commands are `sh -c`
//! scripts; where a test must act while one runs, the script waits on a fifo the test writes to
//! (no sleeps).

use crate::common::client::token;
use crate::common::in_process::Served;
use crate::common::wait::eventually;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use tokio_util::task::AbortOnDropHandle;

const WS: &str = "acme";

/// `pickup ARGS` as a producer of `WS` on `url`, with nothing of the calling environment's
/// Pickup settings.
fn producer(url: &str, token: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pickup"));
    cmd.args(args)
        .env("PICKUP_URL", url)
        .env("PICKUP_TOKEN", token)
        .env("PICKUP_LOG", "error")
        .env_remove("PICKUP_SECRET")
        .env_remove("PICKUP_PROGRESS_FILE")
        .stdin(Stdio::null());
    cmd
}

/// `pickup run` of `script` (run by `sh -c`) as the item `key`, with short periods.
fn run(url: &str, token: &str, key: &str, extra: &[&str], script: &str) -> Command {
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
    producer(url, token, &args)
}

fn writer() -> String {
    token("ci-bot", WS, true)
}

/// The newest card of `key` in the workspace, as a reader sees it.
async fn card(s: &Served, key: &str) -> Option<Value> {
    let page = s
        .client()
        .recent(&token("reader", WS, false), WS, "cap=50")
        .await;
    let card = page.cards.into_iter().find(|c| c.key == key)?;
    Some(serde_json::to_value(card).unwrap())
}

/// Waits until `key`'s card satisfies `ok`.
async fn card_until(s: &Served, key: &str, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
    let what = format!("{key}: {what}");
    eventually(&what, async || match card(s, key).await {
        Some(c) if ok(&c) => Ok(c),
        last => Err(format!("last seen {last:?}")),
    })
    .await
}

/// A fifo a script reads a line from (`read x < "$GATE"`): it waits until [`Gate::open`]. One
/// read per gate: a second `read` of the same fifo could open it while the first writer still
/// has it open, and pass on its end of file.
struct Gate {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Gate {
    fn new() -> Gate {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gate");
        assert!(Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap()
            .success());
        Gate { _dir: dir, path }
    }

    /// Lets the script's next `read` through (blocks until the script opens the fifo).
    fn open(&self) {
        std::fs::OpenOptions::new()
            .write(true)
            .open(&self.path)
            .unwrap()
            .write_all(b"go\n")
            .unwrap();
    }

    fn path(&self) -> &Path {
        &self.path
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

/// Waits for the child, at most `bound`.
fn wait(child: Child, bound: Duration) -> Output {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    rx.recv_timeout(bound)
        .unwrap_or_else(|_| panic!("pickup run did not exit within {bound:?}"))
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test]
async fn run_passes_output_through_unchanged_and_finishes_succeeded() {
    let s = Served::start(&[]);
    let out = run(
        &s.url,
        &writer(),
        "ok",
        &[],
        r#"echo one; echo "pickup:progress 0.5"; printf 'two\r\n\377bytes\nno newline'"#,
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        out.stdout, b"one\npickup:progress 0.5\ntwo\r\n\xffbytes\nno newline",
        "stdout byte for byte, progress lines included"
    );
    assert_eq!(text(&out.stderr), "", "nothing to say when all goes well");
    let c = card(&s, "ok").await.expect("the item is registered");
    assert_eq!(c["status"], "succeeded");
    assert_eq!(c["title"], "Nightly training");
    assert_eq!(c["progress"], 0.5);
    assert_eq!(c["owner"]["sub"], "ci-bot");
}

#[tokio::test]
async fn run_of_a_failing_command_fails_the_item_with_the_code_and_exits_with_it() {
    let s = Served::start(&[]);
    let out = run(&s.url, &writer(), "bad", &[], "echo oops >&2; exit 3")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        text(&out.stderr),
        "oops\n",
        "the command's stderr, untouched"
    );
    let c = card(&s, "bad").await.unwrap();
    assert_eq!(c["status"], "failed");
    assert_eq!(c["title"], "Nightly training (exit 3)");

    // A command that cannot start is 127, as in a shell, and registers nothing.
    let out = producer(
        &s.url,
        &writer(),
        &[
            "run",
            "--ws",
            WS,
            "--key",
            "missing",
            "--title",
            "T",
            "--",
            "no-such-command-here",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(127));
    assert!(text(&out.stderr).contains("cannot start no-such-command-here"));
    assert!(card(&s, "missing").await.is_none());
}

/// Runs `script` as `key`, waits until the server has it running with its progress, sends
/// the wrapper `signal` (`kill -SIGNAL`), and answers how it exited, the item's card, and the
/// output after the progress line.
async fn interrupt(s: &Served, key: &str, script: &str, signal: &str) -> (Output, Value, String) {
    let mut child = run(&s.url, &writer(), key, &[], script)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "pickup:progress 0.25");
    card_until(s, key, "running with its progress", |c| {
        c["status"] == "running" && c["progress"] == 0.25
    })
    .await;
    assert!(Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    // Only the signal, passed on, can end the command within the bound.
    let out = wait(child, Duration::from_secs(20));
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    (out, card(s, key).await.unwrap(), rest.join("\n"))
}

/// SIG`name` (number `number`) sent to the wrapper by another process while the command runs:
/// passed on, the command dies of it, the wrapper exits as it did, and the item is cancelled.
async fn signal_is_passed_on_and_cancels(name: &str, number: i32) {
    let s = Served::start(&[]);
    let (out, c, _) = interrupt(
        &s,
        &name.to_lowercase(),
        r#"echo "pickup:progress 0.25"; exec sleep 60"#,
        name,
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(128 + number),
        "128 + SIG{name}, as the command died of it: {}",
        text(&out.stderr)
    );
    assert_eq!(c["status"], "cancelled", "not left running to turn stalled");
    assert_eq!(
        c["title"],
        format!("Nightly training (cancelled by SIG{name})")
    );
}

#[tokio::test]
async fn run_interrupted_passes_sigint_on_cancels_the_item_and_exits_as_the_command() {
    signal_is_passed_on_and_cancels("INT", 2).await;
}

#[tokio::test]
async fn run_hung_up_passes_sighup_on_cancels_the_item_and_exits_as_the_command() {
    signal_is_passed_on_and_cancels("HUP", 1).await;
}

#[tokio::test]
async fn run_terminated_passes_sigterm_on_and_exits_with_the_code_the_command_chose() {
    let s = Served::start(&[]);
    let gate = Gate::new(); // never opened: the command waits on it until the signal
    let script = format!(
        r#"trap "echo cleaning up; exit 7" TERM; echo "pickup:progress 0.25"; read x < "{}""#,
        gate.path().display()
    );
    let (out, c, rest) = interrupt(&s, "term", &script, "TERM").await;
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
    assert_eq!(rest, "cleaning up", "the command's own handler ran");
    assert_eq!(c["status"], "cancelled");
    assert_eq!(c["title"], "Nightly training (cancelled by SIGTERM)");
}

#[tokio::test]
async fn run_quit_passes_sigquit_on_cancels_the_item_and_exits_as_the_command() {
    signal_is_passed_on_and_cancels("QUIT", 3).await;
}

/// SIGUSR1 is the command's business: passed on, and the command dying of it fails the item
/// with the signal in its title (before: it killed the wrapper and left the item running).
#[tokio::test]
async fn run_passes_sigusr1_on_and_a_command_killed_by_it_fails_the_item() {
    let s = Served::start(&[]);
    let (out, c, _) = interrupt(
        &s,
        "usr1",
        r#"echo "pickup:progress 0.25"; exec sleep 60"#,
        "USR1",
    )
    .await;
    assert_eq!(out.status.code(), Some(128 + 10), "{}", text(&out.stderr));
    assert_eq!(c["status"], "failed");
    assert_eq!(c["title"], "Nightly training (killed by SIGUSR1)");
}

/// A command that handles SIGUSR2 and then ends well: the item succeeds (a passed-on signal
/// that is not a stop does not cancel).
#[tokio::test]
async fn run_passes_sigusr2_on_to_a_command_that_handles_it() {
    let s = Served::start(&[]);
    let gate = Gate::new(); // never opened: the command waits on it until the signal
    let script = format!(
        r#"trap "echo reloaded; exit 0" USR2; echo "pickup:progress 0.25"; read x < "{}""#,
        gate.path().display()
    );
    let (out, c, rest) = interrupt(&s, "usr2", &script, "USR2").await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(rest, "reloaded", "the command's own handler ran");
    assert_eq!(c["status"], "succeeded");
    assert_eq!(c["title"], "Nightly training");
}

#[tokio::test]
async fn run_passes_a_prompt_without_a_newline_through_at_once() {
    let s = Served::start(&[]);
    let mut child = run(
        &s.url,
        &writer(),
        "ask",
        &[],
        r#"printf 'Continue? '; read answer; echo "got $answer""#,
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let mut stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 256];
        while let Ok(n @ 1..) = std::io::Read::read(&mut stdout, &mut buf) {
            let _ = tx.send(buf[..n].to_vec());
        }
    });
    // The command waits for its answer, so only output passed on before its line ends can
    // show the prompt.
    let mut seen = Vec::new();
    while seen != b"Continue? " {
        let chunk = rx
            .recv_timeout(Duration::from_secs(15))
            .unwrap_or_else(|_| panic!("the prompt was held back; seen {:?}", text(&seen)));
        seen.extend_from_slice(&chunk);
    }
    child.stdin.take().unwrap().write_all(b"yes\n").unwrap();
    let out = wait(child, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    seen.extend(rx.iter().flatten());
    assert_eq!(text(&seen), "Continue? got yes\n");
}

#[tokio::test]
async fn run_reports_progress_from_output_lines_and_from_the_progress_file() {
    let s = Served::start(&[]);
    let (gate, gate2) = (Gate::new(), Gate::new());
    let child = run(
        &s.url,
        &writer(),
        "progress",
        &[],
        r#"echo "pickup:progress 0.42"; read x < "$GATE"; echo 0.8 > "$PICKUP_PROGRESS_FILE"; read x < "$GATE2"; echo done"#,
    )
    .env("GATE", gate.path())
    .env("GATE2", gate2.path())
    .stdout(Stdio::piped())
    .spawn()
    .unwrap();
    let first = card_until(&s, "progress", "at 0.42 from the output line", |c| {
        c["status"] == "running" && c["progress"] == 0.42
    })
    .await;
    // Nothing new to say while the command waits: the heartbeat (1 s here) still updates it.
    card_until(&s, "progress", "updated by a heartbeat", |c| {
        c["updated_at"] != first["updated_at"] && c["progress"] == 0.42
    })
    .await;
    gate.open();
    card_until(&s, "progress", "at 0.8 from the file", |c| {
        c["status"] == "running" && c["progress"] == 0.8
    })
    .await;
    gate2.open();
    let out = wait(child, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "pickup:progress 0.42\ndone\n");
    let c = card(&s, "progress").await.unwrap();
    assert_eq!(c["status"], "succeeded");
    assert_eq!(c["progress"], 0.8);
}

/// A loopback address nothing listens on (yet).
fn free_addr() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().to_string()
}

/// Reads `child`'s stderr on a thread; the receiver gets each line.
fn stderr_lines(child: &mut Child) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    rx
}

fn wait_for_line(rx: &std::sync::mpsc::Receiver<String>, needle: &str) -> String {
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(15))
            .unwrap_or_else(|_| panic!("no stderr line with {needle:?}"));
        if line.contains(needle) {
            return line;
        }
    }
}

#[tokio::test]
async fn run_with_the_server_down_at_start_runs_the_command_and_registers_once_it_answers() {
    let addr = free_addr();
    let url = format!("http://{addr}");
    let token = writer();
    let gate = Gate::new();
    let mut child = run(
        &url,
        &token,
        "down",
        &[],
        r#"echo started; read x < "$GATE"; exit 4"#,
    )
    .env("GATE", gate.path())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert_eq!(
        first, "started\n",
        "the command runs while the server is down"
    );
    let err = stderr_lines(&mut child);
    let warning = wait_for_line(&err, "cannot register the item");
    assert!(warning.contains("keeps trying"), "{warning}");

    let s = Served::start_at(&addr, &[]);
    card_until(&s, "down", "registered as running", |c| {
        c["status"] == "running"
    })
    .await;
    gate.open();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(4), "the command's own status");
    let c = card(&s, "down").await.unwrap();
    assert_eq!(c["status"], "failed");
    assert_eq!(c["title"], "Nightly training (exit 4)");
}

#[tokio::test]
async fn run_whose_command_ends_while_the_server_is_down_finishes_the_item_once_it_answers() {
    let addr = free_addr();
    let url = format!("http://{addr}");
    let token = writer();
    let mut child = run(
        &url,
        &token,
        "late",
        &["--finish-timeout", "60s"],
        "echo ended",
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let err = stderr_lines(&mut child);
    wait_for_line(&err, "cannot register the item");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut last = String::new();
    out.read_line(&mut last).unwrap();
    assert_eq!(
        last, "ended\n",
        "the command's last words, before any server answers"
    );
    let s = Served::start_at(&addr, &[]);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    wait_for_line(&err, "answers again; item");
    let c = card(&s, "late")
        .await
        .expect("registered once the server answered");
    assert_eq!(c["status"], "succeeded");
}

#[test]
fn run_gives_up_finishing_after_the_finish_timeout_and_exits_with_the_command_status() {
    let url = format!("http://{}", free_addr());
    let token = writer();
    let started = Instant::now();
    let out = run(&url, &token, "never", &["--finish-timeout", "1s"], "exit 5")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    assert!(started.elapsed() < Duration::from_secs(10));
    let err = text(&out.stderr);
    assert!(
        err.contains("gave up finishing the item after 1s") && err.contains("never registered"),
        "{err}"
    );
}

#[test]
fn run_against_a_server_that_never_answers_exits_when_the_finish_timeout_is_over() {
    // Accepts connections and reads nothing, answers nothing.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming() {
            held.push(conn);
        }
    });
    let token = writer();
    let started = Instant::now();
    let out = run(
        &url,
        &token,
        "silent",
        &["--finish-timeout", "1s"],
        "exit 0",
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "a hanging request does not hold the wrapper past its finish timeout: {:?}",
        started.elapsed()
    );
    let err = text(&out.stderr);
    assert!(err.contains("gave up finishing the item after 1s"), "{err}");
}

#[tokio::test]
async fn run_refused_by_the_server_still_runs_the_command() {
    let s = Served::start(&[]);
    let reader = token("reader", WS, false);
    let out = run(&s.url, &reader, "refused", &[], "echo still-ran; exit 0")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "still-ran\n");
    let err = text(&out.stderr);
    assert!(err.contains("(403)") && err.contains("unreported"), "{err}");
    assert!(card(&s, "refused").await.is_none());
}

/// `pickup item …` with `args`: its stdout, after checking it succeeded.
fn item(s: &Served, token: &str, args: &[&str]) -> String {
    let mut all = vec!["item"];
    all.extend_from_slice(args);
    let out = producer(&s.url, token, &all).output().unwrap();
    assert!(
        out.status.success(),
        "pickup item {args:?}: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

#[tokio::test]
async fn item_commands_start_update_finish_get_and_remove_an_item() {
    let s = Served::start(&[]);
    let token = writer();
    let id = item(
        &s,
        &token,
        &[
            "start", "--ws", WS, "--key", "upload", "--title", "Upload", "--url", "/u/1",
        ],
    );
    let id = id.trim_end();
    assert!(id.ends_with("_upload"), "the id alone: {id:?}");
    let c = card(&s, "upload").await.unwrap();
    assert_eq!(
        (c["id"].as_str(), &c["status"]),
        (Some(id), &"running".into())
    );

    let updated: Value = serde_json::from_str(&item(
        &s,
        &token,
        &["update", "--ws", WS, id, "--progress", "0.3"],
    ))
    .unwrap();
    assert_eq!(updated["progress"], 0.3);
    assert_eq!(updated["title"], "Upload", "what is not given is kept");
    assert_eq!(updated["url"], "/u/1");

    let finished: Value = serde_json::from_str(&item(
        &s,
        &token,
        &["finish", "--ws", WS, id, "--status", "failed"],
    ))
    .unwrap();
    assert_eq!(finished["status"], "failed");
    assert!(finished["finished_at"].is_string());
    let got: Value = serde_json::from_str(&item(&s, &token, &["get", "--ws", WS, id])).unwrap();
    assert_eq!(got, finished, "get prints the record as it is");

    assert_eq!(item(&s, &token, &["rm", "--ws", WS, id]), "");
    let out = producer(&s.url, &token, &["item", "get", "--ws", WS, id])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("(404): no such item"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test]
async fn item_commands_say_what_is_wrong() {
    let s = Served::start(&[]);
    let fail = |token: &str, url: &str, args: &[&str]| {
        let out = producer(url, token, args).output().unwrap();
        assert!(!out.status.success(), "{args:?} succeeded");
        text(&out.stderr)
    };
    let reader = token("reader", WS, false);
    let start = ["item", "start", "--ws", WS, "--key", "k", "--title", "T"];
    assert!(fail(&reader, &s.url, &start).contains("(403)"));
    assert!(fail(&writer(), "localhost:3000", &start).contains("PICKUP_URL"));
    assert!(fail("", &s.url, &start).contains("PICKUP_TOKEN"));
    let err = fail(
        &writer(),
        &s.url,
        &["item", "finish", "--ws", WS, "x", "--status", "running"],
    );
    assert!(err.contains("succeeded, failed, cancelled"), "{err}");
    let down = format!("http://{}", free_addr());
    assert!(fail(&writer(), &down, &start).contains("cannot reach"));
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
/// `fault`; the gate opens once the wrapper's standard error has said each of `lines` (in
/// order), so what the test checks happened while the command ran. The exit status, and the
/// lines that said them.
async fn run_through(
    s: &Served,
    fault: Fault,
    key: &'static str,
    lines: &'static [&'static str],
) -> (std::process::ExitStatus, Vec<String>) {
    let upstream = s.url.trim_start_matches("http://").to_string();
    let (proxy, _proxying) = proxy(upstream, fault).await;
    let token = writer();
    let gate = Gate::new();
    let gate_path = gate.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut child = run(&proxy, &token, key, &[], r#"read x < "$GATE""#)
            .env("GATE", &gate_path)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let err = stderr_lines(&mut child);
        let said = lines.iter().map(|l| wait_for_line(&err, l)).collect();
        gate.open();
        (child.wait().unwrap(), said)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_whose_registration_answer_was_lost_adopts_the_item_instead_of_making_a_second() {
    let s = Served::start(&[]);
    // The command waits until the wrapper has lost the answer, so the retry is the wrapper's
    // own (not a finish that found the registration still in flight).
    let lines = &["cannot register the item"];
    let (status, said) = run_through(&s, Fault::LoseFirstPostAnswer, "lost", lines).await;
    assert_eq!(status.code(), Some(0));
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
#[tokio::test]
async fn run_longer_than_the_ttl_renews_its_run_and_keeps_its_card() {
    const TTL: Duration = Duration::from_secs(4);
    let s = Served::start(&["--ttl", "4s"]);
    let gate = Gate::new();
    let child = run(
        &s.url,
        &writer(),
        "long",
        &[],
        r#"echo "pickup:progress 0.5"; read x < "$GATE""#,
    )
    .env("GATE", gate.path())
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
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
    gate.open();
    let out = wait(child, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stderr), "", "nothing to say when all goes well");
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
    let (status, said) = run_through(&s, Fault::RefuseFirstPost, "healed", lines).await;
    assert_eq!(status.code(), Some(0));
    assert!(said[0].contains("in case the server heals"), "{said:?}");
    assert!(said[1].contains("is up to date"), "{said:?}");
    let c = card(&s, "healed").await.unwrap();
    assert_eq!(c["status"], "succeeded");
}
