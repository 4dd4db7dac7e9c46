//! This server's clock against the store's.
//!
//! - Ages: while this server's clock disagrees with the store's by more than the allowed skew,
//!   nothing is deleted (by age or as superseded: both rest on ids other clocks dated).
//! - Dates: what this server writes (ids, `updated_at`, `heartbeat_at`, `finished_at`) is dated
//!   by the store's clock whenever this server's own clock is off it by more than the
//!   measurement can tell. The store's time is measured, then carried forward on the monotonic
//!   clock, so a clock NTP steps (or one run under `faketime`) never dates a write: every
//!   server's dates are the store's, and ids are in creation order across servers.

use super::marker_index::Index;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often the store's time is measured again.
const CLOCK_CHECK_EVERY: Duration = Duration::from_secs(60);

/// How far this server's clock may be off the measured store time and still date writes
/// itself: the store's last-modified times come in whole seconds on S3 and Azure, and the
/// measurement takes a round trip. Within this, this server's clock is the finer one.
const MEASURED_WITHIN_MS: u64 = 1_500;

/// The last measurement of the store's clock.
#[derive(Default)]
pub(super) struct ClockCheck {
    last: Mutex<Option<Measured>>,
}

#[derive(Debug, Clone, Copy)]
struct Measured {
    /// When the measurement was made, on this machine's monotonic clock.
    at: Instant,
    /// Whether it succeeded and, if so, the store's time then (ms since the epoch).
    store_ms: Option<u64>,
    /// Whether this server's clock agreed with the store's within the skew then.
    agreed: bool,
    /// How far the two clocks may seem apart from the measurement's own error: the store's
    /// whole seconds and the probe's round trip.
    within_ms: u64,
}

/// How this server's clock stands against the store's, for `/readyz` and the start-up log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClockStatus {
    /// Not compared (tests with manual clocks).
    Unchecked,
    /// The store's clock could not be read.
    Unmeasured,
    /// Off by `off_ms` (positive: this server is ahead).
    Measured { off_ms: i64, max_skew_ms: u64 },
}

impl ClockStatus {
    /// A line for operators, or `None` when there is nothing to say.
    pub fn warning(&self) -> Option<String> {
        match *self {
            ClockStatus::Unchecked => None,
            ClockStatus::Unmeasured => Some("the store's clock could not be read: nothing is deleted until it can".into()),
            ClockStatus::Measured { off_ms, max_skew_ms } if off_ms.unsigned_abs() > max_skew_ms => Some(format!(
                "this server's clock is {} s {} the store's, more than PICKUP_MAX_SKEW ({} s): writes are dated by the store's clock and nothing is deleted until the clock is fixed",
                off_ms.unsigned_abs() / 1000,
                if off_ms > 0 { "ahead of" } else { "behind" },
                max_skew_ms / 1000
            )),
            ClockStatus::Measured { .. } => None,
        }
    }
}

impl Measured {
    /// The store's time now, carried forward from the measurement on the monotonic clock.
    fn store_now(&self) -> Option<u64> {
        Some(self.store_ms? + self.at.elapsed().as_millis() as u64)
    }

    /// The store's time now and how far off it the measurement cannot tell from agreement.
    fn store_now_within(&self) -> Option<(u64, u64)> {
        Some((self.store_now()?, self.within_ms))
    }
}

/// The time to date a write with: `mine` while it agrees with the measured store time (within
/// the measurement's error), the store time otherwise.
fn date(mine: u64, store_now: Option<(u64, u64)>) -> u64 {
    match store_now {
        Some((store, within)) if store.abs_diff(mine) > within => store,
        _ => mine,
    }
}

impl Index {
    /// Whether this server's clock may be trusted to judge ages: it agrees with the store's
    /// clock within the allowed skew. A failed check is a "no": nothing is deleted on the
    /// strength of an error.
    pub async fn ages_trusted(&self) -> bool {
        if self.clock_check.is_none() {
            return true;
        }
        let mine = self.clock.now_ms();
        // Also now, not only at the last measurement: a clock stepped since then is caught
        // at once, from the store's time carried forward on the monotonic clock.
        self.measured().await.is_some_and(|m| {
            m.agreed
                && m.store_now_within().is_some_and(|(store, within)| {
                    store.abs_diff(mine) <= self.limits.max_skew_ms + within
                })
        })
    }

    /// Now, for dating a write: this server's clock, or the store's when they disagree.
    pub(super) async fn now_for_writes(&self) -> u64 {
        let mine = self.clock.now_ms();
        if self.clock_check.is_none() {
            return mine;
        }
        date(
            mine,
            self.measured().await.and_then(|m| m.store_now_within()),
        )
    }

    /// [`Index::now_for_writes`] without asking the store: from the last measurement.
    pub(super) fn now_for_writes_cached(&self) -> u64 {
        let mine = self.clock.now_ms();
        let last = self
            .clock_check
            .as_ref()
            .and_then(|c| *c.last.lock().expect("clock check lock"));
        date(mine, last.and_then(|m| m.store_now_within()))
    }

    /// How this server's clock stands against the store's (measured again if due).
    pub async fn clock_status(&self) -> ClockStatus {
        if self.clock_check.is_none() {
            return ClockStatus::Unchecked;
        }
        match self.measured().await.and_then(|m| m.store_now()) {
            None => ClockStatus::Unmeasured,
            Some(store) => ClockStatus::Measured {
                off_ms: self.clock.now_ms() as i64 - store as i64,
                max_skew_ms: self.limits.max_skew_ms,
            },
        }
    }

    /// The last measurement, made again when older than [`CLOCK_CHECK_EVERY`]. A failed
    /// measurement keeps the store time of the last one that worked (still the best date).
    async fn measured(&self) -> Option<Measured> {
        let check = self.clock_check.as_ref()?;
        let last = *check.last.lock().expect("clock check lock");
        if let Some(m) = last {
            if m.at.elapsed() < CLOCK_CHECK_EVERY {
                return Some(m);
            }
        }
        let measured = match self.store.now().await {
            Ok(probe) => {
                // The store stamped the probe's write somewhere in its round trip: say in the
                // middle, give or take half of it. This server's clock then is its clock now
                // less the monotonic time since.
                let half = (probe.answered - probe.sent) / 2;
                let at = probe.sent + half;
                let mine = self
                    .clock
                    .now_ms()
                    .saturating_sub(at.elapsed().as_millis() as u64);
                // Whole seconds (S3, Azure): the true time lies within the second after.
                let theirs = if probe.ms % 1000 == 0 {
                    probe.ms + 500
                } else {
                    probe.ms
                };
                let within_ms = MEASURED_WITHIN_MS + half.as_millis() as u64;
                let agreed =
                    theirs.abs_diff(mine) <= self.limits.max_skew_ms + half.as_millis() as u64;
                if !agreed {
                    tracing::error!(
                        store = %self.store.url(),
                        this_server_ms = mine,
                        store_ms = theirs,
                        max_skew_ms = self.limits.max_skew_ms,
                        "THIS SERVER'S CLOCK DISAGREES WITH THE STORE'S by more than PICKUP_MAX_SKEW: writes are dated by the store's clock, and nothing is deleted until it is fixed"
                    );
                } else if theirs.abs_diff(mine) > within_ms {
                    tracing::warn!(
                        this_server_ms = mine,
                        store_ms = theirs,
                        "this server's clock is off the store's: writes are dated by the store's clock"
                    );
                }
                Measured {
                    at,
                    store_ms: Some(theirs),
                    agreed,
                    within_ms,
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not read the store's clock; nothing is deleted for now");
                // The last store time that worked, carried to now, is still the best date.
                Measured {
                    at: Instant::now(),
                    store_ms: last.and_then(|m| m.store_now()),
                    agreed: false,
                    within_ms: last.map_or(MEASURED_WITHIN_MS, |m| m.within_ms),
                }
            }
        };
        *check.last.lock().expect("clock check lock") = Some(measured);
        Some(measured)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_dated_by_the_store_when_this_clock_is_off() {
        let store = 1_800_000_000_000;
        assert_eq!(
            date(store + 400, Some((store, MEASURED_WITHIN_MS))),
            store + 400,
            "within the measurement"
        );
        assert_eq!(
            date(store + 3_000, Some((store, MEASURED_WITHIN_MS + 2_000))),
            store + 3_000,
            "within a slow probe's round trip"
        );
        let within = Some((store, MEASURED_WITHIN_MS));
        assert_eq!(date(store - 100_000, within), store, "100 s behind");
        assert_eq!(date(store + 600_000, within), store, "600 s ahead");
        assert_eq!(
            date(store + 600_000, None),
            store + 600_000,
            "never measured"
        );
    }
}
