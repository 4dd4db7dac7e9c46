//! How a wrapped command ended: the item's final status, the title that says why it failed,
//! and the wrapper's own exit status (the command's: its code, or 128 + the signal that
//! killed it, as shells report it).

use app::contract::{Status, MAX_TITLE_CHARS};
use nix::sys::signal::Signal;
use std::os::unix::process::ExitStatusExt;

/// How the command's process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Exit {
    Code(i32),
    Signal(i32),
}

impl From<std::process::ExitStatus> for Exit {
    fn from(s: std::process::ExitStatus) -> Self {
        match (s.code(), s.signal()) {
            (Some(code), _) => Exit::Code(code),
            (None, Some(sig)) => Exit::Signal(sig),
            // Neither (a stopped process is not "ended"): report it as a failure.
            (None, None) => Exit::Code(1),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Outcome {
    pub status: Status,
    /// What the wrapper exits with.
    pub exit_code: u8,
    /// Why it failed, for the title (`exit 3`, `killed by SIGKILL`).
    pub note: Option<String>,
}

fn signal_name(sig: i32) -> String {
    Signal::try_from(sig)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {sig}"))
}

/// The outcome of `exit`. `interrupted`: the wrapper got a signal to stop (SIGINT, SIGTERM,
/// SIGHUP, SIGQUIT) while the command ran (and passed it on): the item is cancelled however
/// the command then ended.
pub(super) fn outcome(exit: Exit, interrupted: Option<i32>) -> Outcome {
    let exit_code = match exit {
        Exit::Code(c) => (c & 0xff) as u8,
        Exit::Signal(s) => (128 + s).clamp(0, 255) as u8,
    };
    let (status, note) = match (interrupted, exit) {
        (Some(sig), _) => (
            Status::Cancelled,
            Some(format!("cancelled by {}", signal_name(sig))),
        ),
        (None, Exit::Code(0)) => (Status::Succeeded, None),
        (None, Exit::Code(c)) => (Status::Failed, Some(format!("exit {c}"))),
        (None, Exit::Signal(s)) => (
            Status::Failed,
            Some(format!("killed by {}", signal_name(s))),
        ),
    };
    Outcome {
        status,
        exit_code,
        note,
    }
}

/// `title (note)`, the title shortened (with `…`) so the whole stays within the server's limit.
pub(super) fn titled(title: &str, note: Option<&str>) -> String {
    let title = title.trim();
    let Some(note) = note else {
        return title.to_string();
    };
    let suffix = format!(" ({note})");
    let room = MAX_TITLE_CHARS.saturating_sub(suffix.chars().count());
    if title.chars().count() <= room {
        format!("{title}{suffix}")
    } else {
        let cut: String = title.chars().take(room.saturating_sub(1)).collect();
        format!("{}…{suffix}", cut.trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_exit_codes() {
        assert_eq!(
            outcome(Exit::Code(0), None),
            Outcome {
                status: Status::Succeeded,
                exit_code: 0,
                note: None
            }
        );
        let failed = outcome(Exit::Code(3), None);
        assert_eq!(failed.status, Status::Failed);
        assert_eq!(failed.exit_code, 3);
        assert_eq!(failed.note.as_deref(), Some("exit 3"));
        let killed = outcome(Exit::Signal(9), None);
        assert_eq!(killed.status, Status::Failed);
        assert_eq!(killed.exit_code, 137);
        assert_eq!(killed.note.as_deref(), Some("killed by SIGKILL"));
        // Interrupted: cancelled, whether the command died of the signal, caught it and
        // exited 130, or even exited 0.
        for exit in [Exit::Signal(2), Exit::Code(130), Exit::Code(0)] {
            let o = outcome(exit, Some(2));
            assert_eq!(o.status, Status::Cancelled, "{exit:?}");
            assert_eq!(o.note.as_deref(), Some("cancelled by SIGINT"));
        }
        assert_eq!(outcome(Exit::Signal(15), Some(15)).exit_code, 143);
        assert_eq!(outcome(Exit::Code(0), Some(2)).exit_code, 0);
        assert_eq!(outcome(Exit::Code(256 + 4), None).exit_code, 4);
    }

    #[test]
    fn titles_stay_within_the_limit() {
        assert_eq!(titled(" Train ", None), "Train");
        assert_eq!(titled("Train", Some("exit 3")), "Train (exit 3)");
        let long = "x".repeat(MAX_TITLE_CHARS);
        let t = titled(&long, Some("exit 3"));
        assert_eq!(t.chars().count(), MAX_TITLE_CHARS);
        assert!(t.ends_with("… (exit 3)"), "{t}");
        assert!(app::contract::stored_text(&t, MAX_TITLE_CHARS).is_some());
    }
}
