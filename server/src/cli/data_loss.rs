//! The one combination of settings refused because it can lose data.

use super::serve::ServeArgs;

impl ServeArgs {
    /// A registration writes its record, then its markers, within the request timeout; the
    /// janitor deletes a record without a marker once it is older than the grace period plus
    /// the clock skew. A request timeout longer than that lets a slow registration be answered
    /// 201 after its record was deleted as an orphan.
    pub(super) fn check_loses_nothing(&self) -> anyhow::Result<()> {
        let (grace, skew) = (self.store.grace, self.store.max_skew);
        if self.request_timeout > grace + skew {
            anyhow::bail!(
                "these settings can lose registrations: PICKUP_REQUEST_TIMEOUT ({}) is longer than PICKUP_GRACE ({}) + PICKUP_MAX_SKEW ({}), so a registration slower than {} could be answered 201 after another server's janitor deleted its record as an orphan. Raise PICKUP_GRACE (or PICKUP_MAX_SKEW) to at least {} in total, or lower PICKUP_REQUEST_TIMEOUT to at most {}",
                humantime::format_duration(self.request_timeout),
                humantime::format_duration(grace),
                humantime::format_duration(skew),
                humantime::format_duration(grace + skew),
                humantime::format_duration(self.request_timeout),
                humantime::format_duration(grace + skew),
            );
        }
        Ok(())
    }
}
