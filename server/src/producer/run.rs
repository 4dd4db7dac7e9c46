//! `pickup run -- COMMAND…`: runs a command as an item of a workspace.
//!
//! The command gets the wrapper's standard input and standard error as they are, and its
//! standard output is passed through unchanged and as it comes (a prompt without a newline
//! shows at once), progress lines included (they are read on the way:
//! [`progress::from_line`]). It also finds, in `PICKUP_PROGRESS_FILE`, a
//! file of the wrapper's own where it may write its progress instead.
//!
//! Environment: the command gets the wrapper's, without Pickup's credentials ([`CREDENTIALS`]:
//! the token, the signing secret, the store's URL) unless `--pass-credentials` asks for them,
//! and with `PICKUP_PROGRESS_FILE`.
//!
//! Signals: the command stays in the wrapper's process group, so it keeps the terminal (it may
//! read from it, and job control works). A Ctrl-C at the terminal therefore reaches the
//! command directly, as does the hang-up of a closed terminal; every signal in [`STOPS`] and
//! [`PASSED_ON`] sent to the wrapper by another process (`kill`, a scheduler, the shell of a
//! closed terminal) is passed on to the command. After one of [`STOPS`] the item ends
//! cancelled; after any other the command decides (a `SIGUSR1` that kills it fails the item
//! with the signal in its title). Either way the wrapper exits as the command did (its code,
//! or 128 + the signal that killed it). Not caught: the job-control stops (`SIGTSTP`,
//! `SIGTTIN`, `SIGTTOU`: the wrapper must stop with its command for the shell's `fg`), the
//! kernel's faults, and `SIGKILL`/`SIGSTOP`, which no process can catch.
//!
//! The server's answers never hold the command up: the [`Reporter`] runs beside it.

use crate::producer::client::Client;
use crate::producer::console::Console;
use crate::producer::outcome::{outcome, Exit};
use crate::producer::progress;
use crate::producer::reporter::{Finish, Item, Reporter, Timing};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use signal_hook::consts::{
    SIGALRM, SIGCONT, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH,
};
use signal_hook::iterator::exfiltrator::WithOrigin;
use signal_hook::iterator::{Handle, SignalsInfo};
use signal_hook::low_level::siginfo::{Cause, Origin};
use std::ffi::OsString;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::process::ChildStdout;
use tokio::sync::{mpsc, watch};

/// After the command ends, how long output that its leftover background processes still
/// write to the pipe is passed through before the wrapper moves on.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(1);

/// Signals that ask the command to stop: passed on, and the item ends cancelled.
const STOPS: [i32; 4] = [SIGHUP, SIGINT, SIGQUIT, SIGTERM];
/// Signals that are the command's business (reload, a timer, a resize, a continue): passed on,
/// and the item ends as the command then does.
const PASSED_ON: [i32; 5] = [SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH, SIGCONT];

/// What the command does not inherit unless `--pass-credentials`: with any of them it could
/// write or delete everything the wrapper's token may.
const CREDENTIALS: [&str; 3] = ["PICKUP_TOKEN", "PICKUP_SECRET", "PICKUP_STORE"];

/// Whether a signal the wrapper got must be passed on to the command. One the kernel sent
/// (a terminal's Ctrl-C, to the whole foreground process group) reached the command already;
/// passing it on would make a second one.
fn forward(cause: Cause) -> bool {
    !matches!(cause, Cause::Kernel)
}

/// Runs `command` as `item`; the exit status is the command's.
pub(crate) async fn run(
    client: Client,
    item: Item,
    timing: Timing,
    command: Vec<OsString>,
    pass_credentials: bool,
    console: &Console,
) -> anyhow::Result<u8> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| anyhow::anyhow!("no command: write it after `--`"))?;
    // Taken over before the command starts, so no signal finds the wrapper unprepared.
    let (signals_handle, mut signal_rx) = take_signals()?;
    let progress_file = tempfile::Builder::new()
        .prefix("pickup-progress-")
        .tempfile()?;
    let mut command = command_of(program, args, progress_file.path(), pass_credentials);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            console.say(format_args!(
                "pickup run: cannot start {}: {e}",
                program.to_string_lossy()
            ));
            signals_handle.close();
            // What shells exit with when a command is missing (127) or cannot be run (126).
            return Ok(if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            });
        }
    };
    let pid = Pid::from_raw(child.id().expect("a child that has not been waited for") as i32);

    let (progress_tx, progress_rx) = watch::channel(None);
    let (ended_tx, ended_rx) = tokio::sync::oneshot::channel();
    let reporter = Reporter::new(client, item, timing, console.clone());
    let reporter = tokio::spawn(reporter.run(progress_rx, ended_rx));
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut pump = tokio::spawn(pass_through(stdout, progress_tx.clone(), console.clone()));
    let (stop_watching, stop) = tokio::sync::oneshot::channel::<()>();
    let watcher = tokio::spawn(watch_file(
        progress_file.path().to_path_buf(),
        timing.progress_every.min(Duration::from_secs(1)),
        progress_tx,
        stop,
    ));

    let (status, interrupted) = wait_passing_signals(&mut child, pid, &mut signal_rx).await?;
    if tokio::time::timeout(DRAIN_AFTER_EXIT, &mut pump)
        .await
        .is_err()
    {
        pump.abort();
    }
    // Its last read is after the command ended, so a value written just before counts.
    let _ = stop_watching.send(());
    let _ = watcher.await;

    let outcome = outcome(Exit::from(status), interrupted);
    let exit_code = outcome.exit_code;
    let _ = ended_tx.send(outcome);
    finish_reporting(reporter, &mut signal_rx, console).await;
    signals_handle.close();
    Ok(exit_code)
}

/// The signals of [`STOPS`] and [`PASSED_ON`], taken over: each one the wrapper gets, with its
/// origin, on the channel (read on a thread of its own); the handle gives them back.
fn take_signals() -> std::io::Result<(Handle, mpsc::UnboundedReceiver<Origin>)> {
    let mut signals = SignalsInfo::<WithOrigin>::new(STOPS.iter().chain(&PASSED_ON))?;
    let handle = signals.handle();
    let (signal_tx, signal_rx) = mpsc::unbounded_channel::<Origin>();
    std::thread::spawn(move || {
        for origin in signals.forever() {
            if signal_tx.send(origin).is_err() {
                break;
            }
        }
    });
    Ok((handle, signal_rx))
}

/// The command as it is started: its output piped through the wrapper, told where its
/// progress file is, and without Pickup's credentials unless `pass_credentials`.
fn command_of(
    program: &OsString,
    args: &[OsString],
    progress_file: &std::path::Path,
    pass_credentials: bool,
) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .env("PICKUP_PROGRESS_FILE", progress_file)
        .stdout(Stdio::piped());
    if !pass_credentials {
        for name in CREDENTIALS {
            command.env_remove(name);
        }
    }
    command
}

/// Waits for the command to end, passing on the signals another process sent the wrapper;
/// answers how it ended and the first of [`STOPS`] it was sent, if any.
async fn wait_passing_signals(
    child: &mut tokio::process::Child,
    pid: Pid,
    signal_rx: &mut mpsc::UnboundedReceiver<Origin>,
) -> std::io::Result<(std::process::ExitStatus, Option<i32>)> {
    let mut interrupted = None;
    loop {
        tokio::select! {
            status = child.wait() => return Ok((status?, interrupted)),
            Some(origin) = signal_rx.recv() => {
                if STOPS.contains(&origin.signal) {
                    interrupted.get_or_insert(origin.signal);
                }
                if forward(origin.cause) {
                    if let Ok(sig) = Signal::try_from(origin.signal) {
                        // The command may have just ended: then there is no one to tell.
                        let _ = kill(pid, sig);
                    }
                }
            }
        }
    }
}

/// Lets the reporter finish the item, unless the wrapper is asked to stop again meanwhile.
async fn finish_reporting(
    mut reporter: tokio::task::JoinHandle<Finish>,
    signal_rx: &mut mpsc::UnboundedReceiver<Origin>,
    console: &Console,
) {
    let stopped_again = async {
        while let Some(origin) = signal_rx.recv().await {
            if STOPS.contains(&origin.signal) {
                return;
            }
        }
        std::future::pending().await
    };
    tokio::select! {
        _ = &mut reporter => {}
        () = stopped_again => {
            console.say(format_args!(
                "pickup run: interrupted again: leaving without finishing the item"
            ));
        }
    }
}

/// Copies the command's output to the wrapper's as it comes, and reports each progress line.
/// When the wrapper's own output is closed, the pipe is closed too, so the command learns it
/// as it would have without the wrapper.
async fn pass_through(
    mut from: ChildStdout,
    progress: watch::Sender<Option<f64>>,
    console: Console,
) {
    let mut buf = vec![0; 8192];
    let mut lines = progress::Lines::default();
    let mut warned = false;
    let mut report = |line: &[u8]| match progress::from_line(line) {
        Some(Ok(p)) => {
            progress.send_replace(Some(p));
        }
        Some(Err(e)) if !warned => {
            console.say(format_args!("pickup run: {e}"));
            warned = true;
        }
        _ => {}
    };
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                console.say(format_args!(
                    "pickup run: cannot read the command's output: {e}"
                ));
                break;
            }
        };
        lines.feed(&buf[..n], &mut report);
        if console.write(&buf[..n]).await.is_err() {
            break;
        }
    }
    lines.finish(&mut report);
}

/// Reads the progress file every `every` (and once more when `stop` fires) and reports each
/// new value it holds. Only a change of the file counts, so a value the output reported later
/// is not overwritten by the file's older one.
async fn watch_file(
    path: std::path::PathBuf,
    every: Duration,
    progress: watch::Sender<Option<f64>>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let mut tick = tokio::time::interval(every);
    let mut last = None;
    loop {
        let stopping = tokio::select! {
            _ = tick.tick() => false,
            _ = &mut stop => true,
        };
        if let Ok(content) = tokio::fs::read_to_string(&path).await {
            // A half-written value is read again on the next tick.
            if let Some(Ok(p)) = progress::from_file(&content) {
                if last != Some(p) {
                    last = Some(p);
                    progress.send_replace(Some(p));
                }
            }
        }
        if stopping {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use signal_hook::low_level::siginfo::Sent;

    #[test]
    fn a_terminal_signal_is_not_sent_twice() {
        assert!(!forward(Cause::Kernel));
        assert!(forward(Cause::Sent(Sent::User)));
        assert!(forward(Cause::Unknown));
    }
}
