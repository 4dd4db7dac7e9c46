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
pub(super) const PREFIX: &[u8] = b"pickup:progress";

#[derive(Debug, Clone, PartialEq, Error)]
pub(super) enum ProgressError {
    #[error("{0:?} is not a progress: write a number from 0 to 1, e.g. `pickup:progress 0.42`")]
    NotAFraction(String),
}

/// The progress a line of output reports: `None` for every line that is not a progress line
/// (the line's own `\n` or `\r\n` may be on it), an error for one that is but whose value is
/// not a number from 0 to 1.
pub(super) fn from_line(line: &[u8]) -> Option<Result<f64, ProgressError>> {
    let rest = line.trim_ascii().strip_prefix(PREFIX)?;
    // `pickup:progressive…` is someone else's line.
    if !rest.first().is_some_and(u8::is_ascii_whitespace) {
        return None;
    }
    Some(fraction(&String::from_utf8_lossy(rest)))
}

/// The longest line kept whole for [`from_line`]; a progress line is a few dozen bytes, so a
/// longer one is skipped rather than held (the output itself is passed through regardless).
pub(super) const MAX_LINE: usize = 4096;

/// Cuts output into lines as it comes in chunks, for [`from_line`]: a line split across chunks
/// is given whole once its end comes; the last line, without a newline, at [`Lines::finish`].
#[derive(Debug, Default)]
pub(super) struct Lines {
    partial: Vec<u8>,
    /// The current line grew past [`MAX_LINE`]: skipped up to its newline.
    skipping: bool,
}

impl Lines {
    /// Calls `each` with every line that `chunk` ends, its `\n` included.
    pub(super) fn feed(&mut self, chunk: &[u8], mut each: impl FnMut(&[u8])) {
        let mut rest = chunk;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let (line, after) = rest.split_at(end + 1);
            if self.skipping {
                self.skipping = false;
            } else if self.partial.is_empty() {
                each(line);
            } else {
                self.partial.extend_from_slice(line);
                each(&self.partial);
            }
            self.partial.clear();
            rest = after;
        }
        if self.skipping {
            return;
        }
        if self.partial.len() + rest.len() > MAX_LINE {
            self.partial.clear();
            self.skipping = true;
        } else {
            self.partial.extend_from_slice(rest);
        }
    }

    /// The output ended: the last line, if it had no newline.
    pub(super) fn finish(&mut self, mut each: impl FnMut(&[u8])) {
        if !self.skipping && !self.partial.is_empty() {
            each(&self.partial);
        }
        self.partial.clear();
        self.skipping = false;
    }
}

/// The progress the file holds: `None` while it is empty (not yet written, or truncated by a
/// writer that has not written again yet).
pub(super) fn from_file(content: &str) -> Option<Result<f64, ProgressError>> {
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
pub(super) struct Throttle {
    every: Duration,
    last: Option<Instant>,
}

impl Throttle {
    pub(super) fn new(every: Duration) -> Self {
        Throttle { every, last: None }
    }

    /// When an update may be sent (now or earlier: at once).
    pub(super) fn next_at(&self, now: Instant) -> Instant {
        match self.last {
            Some(last) => (last + self.every).max(now),
            None => now,
        }
    }

    pub(super) fn sent(&mut self, at: Instant) {
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

    fn lines_of(chunks: &[&[u8]]) -> Vec<Vec<u8>> {
        let mut lines = Lines::default();
        let mut got = Vec::new();
        for chunk in chunks {
            lines.feed(chunk, |l| got.push(l.to_vec()));
        }
        lines.finish(|l| got.push(l.to_vec()));
        got
    }

    #[test]
    fn lines_are_whole_however_the_output_is_cut() {
        let whole: &[&[u8]] = &[b"one\npickup:progress 0.5\ntwo\r\nlast"];
        let cut: &[&[u8]] = &[
            b"on",
            b"e\npickup:pro",
            b"gress 0.5",
            b"\ntwo\r",
            b"\n",
            b"last",
        ];
        let want: Vec<Vec<u8>> = vec![
            b"one\n".to_vec(),
            b"pickup:progress 0.5\n".to_vec(),
            b"two\r\n".to_vec(),
            b"last".to_vec(),
        ];
        assert_eq!(lines_of(whole), want);
        assert_eq!(lines_of(cut), want);
        assert_eq!(lines_of(&[b"a\n", b""]), vec![b"a\n".to_vec()]);
    }

    #[test]
    fn a_line_longer_than_the_limit_is_skipped_up_to_its_end() {
        let long = vec![b'x'; MAX_LINE + 1];
        let got = lines_of(&[&long[..10], &long[10..], b"x\npickup:progress 0.5\n"]);
        assert_eq!(got, vec![b"pickup:progress 0.5\n".to_vec()]);
        let at_limit = vec![b'y'; MAX_LINE];
        let got = lines_of(&[&at_limit, b"\n"]);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].len(), MAX_LINE + 1);
        assert!(lines_of(&[&long]).is_empty(), "nor kept for the end");
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
