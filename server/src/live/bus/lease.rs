//! Who reconciles a workspace for every server this period: a lease on the bus.

use super::Bus;
use crate::index::Workspace;
use std::time::Duration;

/// Takes (or keeps) the lease when nobody else holds it, renewing it for its holder; a lease
/// that would outlast two periods (set by hand, with no expiry) is taken too. Answers who holds
/// it.
pub(super) const LEASE: &str = r"
local held = redis.call('GET', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if held == ARGV[1] or not held or ttl < 0 or ttl > tonumber(ARGV[2]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return ARGV[1]
end
return held
";

impl Bus {
    /// Whether this server may reconcile `ws` for everyone this `period`: a lease on the bus,
    /// held by one server at a time and renewed by its holder each period (it lasts two, so a
    /// holder that renews a little late keeps it, and one that is gone loses it). An error is
    /// not "not mine": the caller reconciles then.
    pub(in crate::live) async fn lease(
        &self,
        ws: &Workspace,
        period: Duration,
    ) -> Result<bool, redis::RedisError> {
        let mut conn = self.connection().await.ok_or_else(|| {
            redis::RedisError::from((redis::ErrorKind::Io, "no connection to the bus"))
        })?;
        let holder: String = self
            .lease
            .key(format!("pickup:reconcile:{ws}"))
            .arg(&self.me)
            .arg((period.as_millis().max(1) as u64).saturating_mul(2))
            .invoke_async(&mut conn)
            .await?;
        // Another holder counts only if it is a server heard, sealed, lately: a name written
        // into Redis by anything else (or by a server with another key) does not stop this
        // one reconciling.
        Ok(holder == self.me || !self.senders.lock().expect("bus lock").contains_key(&holder))
    }
}
