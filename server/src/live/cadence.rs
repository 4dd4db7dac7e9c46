//! How often a watched workspace is reconciled while the bus is healthy. The reconcile is a
//! safety net under the facts, and a workspace nobody writes has nothing for it to catch but a
//! write that bypassed every server (a hand edit, a restore, a server without the bus): so each
//! quiet period doubles the next, up to a ceiling, and any sign of life brings the base back.
//! Pure: the watcher's loop says what happened and asks when to look next.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cadence {
    base: Duration,
    ceiling: Duration,
    period: Duration,
}

impl Cadence {
    /// Starts at `base`; a `ceiling` below it means a fixed period of `base`.
    pub(super) fn new(base: Duration, ceiling: Duration) -> Self {
        Cadence {
            base,
            ceiling: ceiling.max(base),
            period: base,
        }
    }

    /// How long until the next reconcile by period.
    pub(super) fn period(&self) -> Duration {
        self.period
    }

    /// A period passed with no fact and no doubt, and the store (if it was read) held what the
    /// copy held: wait twice as long next time, up to the ceiling.
    pub(super) fn quiet(&mut self) {
        self.period = self.period.saturating_mul(2).min(self.ceiling);
    }

    /// A fact, a doubt, a drift or an error: the workspace is not quiet; back to the base
    /// period. Answers whether the period was longer (the next reconcile is then due sooner).
    pub(super) fn stirred(&mut self) -> bool {
        let was_longer = self.period > self.base;
        self.period = self.base;
        was_longer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn quiet_periods_double_up_to_the_ceiling() {
        let mut c = Cadence::new(30 * S, 600 * S);
        let mut seen = vec![c.period()];
        for _ in 0..7 {
            c.quiet();
            seen.push(c.period());
        }
        let secs: Vec<u64> = seen.iter().map(Duration::as_secs).collect();
        assert_eq!(secs, [30, 60, 120, 240, 480, 600, 600, 600]);
    }

    #[test]
    fn any_sign_of_life_brings_the_base_back() {
        let mut c = Cadence::new(30 * S, 600 * S);
        assert!(!c.stirred(), "at the base already");
        c.quiet();
        c.quiet();
        assert!(c.stirred());
        assert_eq!(c.period(), 30 * S);
        c.quiet();
        assert_eq!(c.period(), 60 * S, "quiet again from the base");
    }

    #[test]
    fn a_ceiling_below_the_base_is_a_fixed_period() {
        let mut c = Cadence::new(30 * S, 10 * S);
        c.quiet();
        assert_eq!(c.period(), 30 * S);
    }

    /// 1,000 idle workspaces at the default ceiling: what one lease holder each lists.
    #[test]
    fn a_thousand_idle_workspaces_list_under_two_a_second() {
        let mut c = Cadence::new(30 * S, 600 * S);
        for _ in 0..10 {
            c.quiet();
        }
        let per_second = 1000.0 / c.period().as_secs_f64();
        assert!(per_second <= 2.0, "{per_second} listings a second");
    }
}
