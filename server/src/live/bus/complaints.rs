//! Log lines a peer could cause without end, kept to one a minute per key.

use std::collections::HashSet;
use std::time::{Duration, Instant};

/// Refusals and connection trouble are logged once a minute per sender (or per reason).
const COMPLAIN_EVERY: Duration = Duration::from_secs(60);
/// Senders a minute's refusals are logged for, at most (the rest are only counted).
const COMPLAINTS: usize = 64;

/// Log lines that a peer could cause without end, kept to one a minute per key.
#[derive(Debug)]
pub(super) struct Complaints {
    since: Instant,
    said: HashSet<String>,
}

impl Complaints {
    pub(super) fn new() -> Self {
        Complaints {
            since: Instant::now(),
            said: HashSet::new(),
        }
    }

    /// Whether to log about `key` now.
    pub(super) fn allow(&mut self, key: &str) -> bool {
        if self.since.elapsed() >= COMPLAIN_EVERY {
            self.since = Instant::now();
            self.said.clear();
        }
        self.said.len() < COMPLAINTS && self.said.insert(key.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complaints_are_bounded_per_minute() {
        let mut c = Complaints::new();
        assert!(c.allow("a"));
        assert!(!c.allow("a"));
        for i in 0..COMPLAINTS * 2 {
            c.allow(&i.to_string());
        }
        assert_eq!(c.said.len(), COMPLAINTS);
    }
}
