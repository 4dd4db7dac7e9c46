//! Whether this server's clock may judge ages: it is compared with the store's clock, and
//! while the two disagree by more than the allowed skew nothing is deleted by age.

use super::marker_index::Index;

/// How often [`ClockCheck`] asks the store for its time.
const CLOCK_CHECK_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// The last comparison of this server's clock with the store's, reused for a minute.
#[derive(Default)]
pub(super) struct ClockCheck {
    last: std::sync::Mutex<Option<(std::time::Instant, bool)>>,
}

impl Index {
    /// Whether this server's clock may be trusted to judge ages: it agrees with the store's
    /// clock within the allowed skew. A failed check is a "no": nothing is deleted by age on
    /// the strength of an error.
    pub async fn ages_trusted(&self) -> bool {
        let Some(check) = &self.clock_check else {
            return true;
        };
        if let Some((at, ok)) = *check.last.lock().expect("clock check lock") {
            if at.elapsed() < CLOCK_CHECK_EVERY {
                return ok;
            }
        }
        let before = self.clock.now_ms();
        let store = self.store.now_ms().await;
        let mine = before + self.clock.now_ms().saturating_sub(before) / 2;
        let ok = match store {
            Ok(theirs) if theirs.abs_diff(mine) <= self.limits.max_skew_ms => true,
            Ok(theirs) => {
                tracing::error!(
                    store = %self.store.url(),
                    this_server_ms = mine,
                    store_ms = theirs,
                    max_skew_ms = self.limits.max_skew_ms,
                    "THIS SERVER'S CLOCK DISAGREES WITH THE STORE'S by more than PICKUP_MAX_SKEW: nothing is deleted by age until it is fixed"
                );
                false
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not read the store's clock; nothing is deleted by age for now");
                false
            }
        };
        *check.last.lock().expect("clock check lock") = Some((std::time::Instant::now(), ok));
        ok
    }
}
