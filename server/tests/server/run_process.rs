//! `pickup run` as a process, where the process is the point: signals another process sends
//! the wrapper (passed on to the command, the item ended as the command was), and the
//! command's output and errors passed through the wrapper's own, byte for byte and at once.
//! The rest of `pickup run`, in this process: `run.rs`.

use super::run::{card, card_until, writer, Gate, WS};
use crate::common::in_process::Served;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

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

/// Each signal another process may send the wrapper while its command runs: passed on; the
/// stops (INT, HUP, QUIT, TERM) cancel the item, the others (USR1, USR2) are the command's
/// business; the wrapper exits as the command did (its code, or 128 + the signal it died of).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_signal_is_passed_on_and_the_item_ends_as_the_command_did() {
    let s = Served::start(&[]);
    let dies = r#"echo "pickup:progress 0.25"; exec sleep 60"#;
    for (name, number) in [("INT", 2), ("HUP", 1), ("QUIT", 3)] {
        let (out, c, _) = interrupt(&s, &name.to_lowercase(), dies, name).await;
        assert_eq!(
            out.status.code(),
            Some(128 + number),
            "128 + SIG{name}, as the command died of it: {}",
            text(&out.stderr)
        );
        assert_eq!(
            c["status"], "cancelled",
            "SIG{name}: not left running to turn stalled"
        );
        assert_eq!(
            c["title"],
            format!("Nightly training (cancelled by SIG{name})")
        );
    }
    // SIGTERM to a command that handles it and chooses its own code.
    let gate = Gate::new(); // never opened: the command waits on it until the signal
    let script = format!(
        r#"trap "echo cleaning up; exit 7" TERM; echo "pickup:progress 0.25"; {}"#,
        gate.read()
    );
    let (out, c, rest) = interrupt(&s, "term", &script, "TERM").await;
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
    assert_eq!(rest, "cleaning up", "the command's own handler ran");
    assert_eq!(c["status"], "cancelled");
    assert_eq!(c["title"], "Nightly training (cancelled by SIGTERM)");
    // SIGUSR1 is the command's business: passed on, and the command dying of it fails the
    // item with the signal in its title.
    let (out, c, _) = interrupt(&s, "usr1", dies, "USR1").await;
    assert_eq!(out.status.code(), Some(128 + 10), "{}", text(&out.stderr));
    assert_eq!(c["status"], "failed");
    assert_eq!(c["title"], "Nightly training (killed by SIGUSR1)");
    // A command that handles SIGUSR2 and then ends well: a passed-on signal that is not a
    // stop does not cancel.
    let gate = Gate::new();
    let script = format!(
        r#"trap "echo reloaded; exit 0" USR2; echo "pickup:progress 0.25"; {}"#,
        gate.read()
    );
    let (out, c, rest) = interrupt(&s, "usr2", &script, "USR2").await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(rest, "reloaded", "the command's own handler ran");
    assert_eq!(c["status"], "succeeded");
    assert_eq!(c["title"], "Nightly training");
}

/// The wrapper's output and errors are its command's: a prompt without a newline shows at
/// once (before the command gets its answer), and the command's standard error is untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_passes_a_prompt_at_once_and_the_commands_errors_untouched() {
    let s = Served::start(&[]);
    let mut child = run(
        &s.url,
        &writer(),
        "ask",
        &[],
        r#"printf 'Continue? '; read answer; echo "got $answer"; echo oops >&2"#,
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
    assert_eq!(
        text(&out.stderr),
        "oops\n",
        "the command's stderr, untouched"
    );
    let c = card(&s, "ask").await.unwrap();
    assert_eq!(c["status"], "succeeded");
}
