//! How writes are retried after a transient fault.

use std::time::Duration;

/// Bounded, jittered exponential back-off for writes that failed with a transient fault (a
/// dropped connection, a timeout, a 5xx). object_store retries only idempotent requests itself;
/// a create-only put is not one, so Pickup retries it here and settles the ambiguous case (the
/// store applied it, the answer was lost) by reading the key back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Retry {
    /// Tries after the first one.
    pub retries: usize,
    pub min_delay: Duration,
    pub max_delay: Duration,
}

impl Default for Retry {
    fn default() -> Self {
        Retry {
            retries: 6,
            min_delay: Duration::from_millis(50),
            max_delay: Duration::from_secs(2),
        }
    }
}

impl Retry {
    pub(super) fn delays(&self) -> impl Iterator<Item = Duration> {
        use backon::BackoffBuilder;
        backon::ExponentialBuilder::default()
            .with_min_delay(self.min_delay)
            .with_max_delay(self.max_delay)
            .with_max_times(self.retries)
            .with_jitter()
            .build()
    }
}
