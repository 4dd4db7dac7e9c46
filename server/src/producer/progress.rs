//! Progress as a wrapped command reports it, and how often it is passed on.
//!
//! A command says how far it is with a line `pickup:progress 0.42` on its standard output, or
//! by writing `0.42` to the file `PICKUP_PROGRESS_FILE` names. Both are read here; the wrapper
//! sends the newest value at most once per [`Throttle`] period.

use std::time::Duration;
// tokio's, so the reporter can sleep until it; it is the std clock outside a paused runtime.
use thiserror::Error;
use tokio::time::Instant;

/// What a progress line starts with.
pub const PREFIX: &[u8] = b"pickup:progress";

#[derive(Debug, Clone, PartialEq, Error)]
pub enum ProgressError {
    #[error("{0:?} is not a progress: write a number from 0 to 1, e.g. `pickup:progress 0.42`")]
    NotAFraction(String),
}

/// The progress a line of output reports: `None` for every line that is not a progress line
/// (the line's own `\n` or `\r\n` may be on it), an error for one that is but whose value is
/// not a number from 0 to 1.
pub fn from_line(line: &[u8]) -> Option<Result<f64, ProgressError>> {
    let rest = line.trim_ascii().strip_prefix(PREFIX)?;
    // `pickup:progressive…` is someone else's line.
    if !rest.first().is_some_and(u8::is_ascii_whitespace) {
        return None;
    }
    Some(fraction(&String::from_utf8_lossy(rest)))
}

/// The progress the file holds: `None` while it is empty (not yet written, or truncated by a
/// writer that has not written again yet).
pub fn from_file(content: &str) -> Option<Result<f64, ProgressError>> {
    let text = content.trim();
    (!text.is_empty()).then(|| fraction(text))
}

fn fraction(text: &str) -> Result<f64, ProgressError> {
    let text = text.trim();
    text.parse::<f64>()
        .ok()
        .filter(|v| (0.0..=1.0).contains(v))
        .ok_or_else(|| ProgressError::NotAFraction(text.to_string()))
}

/// At most one progress update per `every`: the first at once, later ones once the period
/// since the last one sent is over (the newest value then).
#[derive(Debug, Clone)]
pub struct Throttle {
    every: Duration,
    last: Option<Instant>,
}

impl Throttle {
    pub fn new(every: Duration) -> Self {
        Throttle { every, last: None }
    }

    /// When an update may be sent (now or earlier: at once).
    pub fn next_at(&self, now: Instant) -> Instant {
        match self.last {
            Some(last) => (last + self.every).max(now),
            None => now,
        }
    }

    pub fn sent(&mut self, at: Instant) {
        self.last = Some(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines() {
        assert_eq!(from_line(b"pickup:progress 0.42\n"), Some(Ok(0.42)));
        assert_eq!(from_line(b"  pickup:progress\t1\r\n"), Some(Ok(1.0)));
        assert_eq!(from_line(b"pickup:progress 0"), Some(Ok(0.0)));
        for not_ours in [
            &b"epoch 3 loss 0.1\n"[..],
            b"progress 0.5",
            b"pickup:progressive 0.5",
            b"pickup:progress",
            b"say pickup:progress 0.5",
            b"\xff\xfe binary",
            b"",
        ] {
            assert_eq!(from_line(not_ours), None, "{not_ours:?}");
        }
        for bad in [
            &b"pickup:progress 42%"[..],
            b"pickup:progress 1.5",
            b"pickup:progress -0.1",
            b"pickup:progress NaN",
            b"pickup:progress 0.5 0.6",
        ] {
            assert!(matches!(from_line(bad), Some(Err(_))), "{bad:?}");
        }
    }

    #[test]
    fn progress_files() {
        assert_eq!(from_file("0.25\n"), Some(Ok(0.25)));
        assert_eq!(from_file(""), None);
        assert_eq!(from_file(" \n"), None);
        assert!(matches!(from_file("half"), Some(Err(_))));
    }

    #[test]
    fn throttle_sends_the_first_at_once_then_once_per_period() {
        let t0 = Instant::now();
        let every = Duration::from_secs(5);
        let mut t = Throttle::new(every);
        assert_eq!(t.next_at(t0), t0);
        t.sent(t0);
        let soon = t0 + Duration::from_secs(1);
        assert_eq!(t.next_at(soon), t0 + every);
        let late = t0 + Duration::from_secs(9);
        assert_eq!(t.next_at(late), late);
    }
}
