//! Who reconciles a workspace for every server this period: a lease on the bus.

use super::Bus;
use crate::index::Workspace;
use std::time::Duration;

/// Takes (or keeps) the lease for `ARGV[2]` ms when nobody else holds it, renewing it for its
/// holder; a lease that would outlast `ARGV[3]` ms, two of the longest periods (set by hand, or
/// with no expiry), is taken too. Answers who holds it. The longest, not the asker's own
/// period: a holder whose quiet periods have grown longer than the asker's holds it rightly.
pub(super) const LEASE: &str = r"
local held = redis.call('GET', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if held == ARGV[1] or not held or ttl < 0 or ttl > tonumber(ARGV[3]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return ARGV[1]
end
return held
";

/// Gives the lease up if this server holds it.
pub(super) const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

fn key(ws: &Workspace) -> String {
    format!("pickup:reconcile:{ws}")
}

fn twice(period: Duration) -> u64 {
    (period.as_millis().max(1) as u64).saturating_mul(2)
}

impl Bus {
    /// Whether this server may reconcile `ws` for everyone this `period`: a lease on the bus,
    /// held by one server at a time and renewed by its holder each period (it lasts two, so a
    /// holder that renews a little late keeps it, and one that is gone loses it). `longest` is
    /// the longest period any server's may grow to. An error is not "not mine": the caller
    /// reconciles then.
    pub(in crate::live) async fn lease(
        &self,
        ws: &Workspace,
        period: Duration,
        longest: Duration,
    ) -> Result<bool, redis::RedisError> {
        let mut conn = self.connection().await.ok_or_else(|| {
            redis::RedisError::from((redis::ErrorKind::Io, "no connection to the bus"))
        })?;
        let holder: String = self
            .lease
            .key(key(ws))
            .arg(&self.me)
            .arg(twice(period))
            .arg(twice(longest.max(period)))
            .invoke_async(&mut conn)
            .await?;
        // Another holder counts only if it is a server heard, sealed, lately: a name written
        // into Redis by anything else (or by a server with another key) does not stop this
        // one reconciling.
        Ok(holder == self.me || !self.senders.lock().expect("bus lock").contains_key(&holder))
    }

    /// This server watches `ws` no more: give its lease up, so that a server still watching it
    /// takes it at its next period rather than when a long quiet lease runs out. An error
    /// changes nothing: the lease then runs out, as a gone holder's does.
    pub(in crate::live) async fn release(&self, ws: &Workspace) {
        let Some(mut conn) = self.connection().await else {
            return;
        };
        let released: Result<i64, _> = self
            .release
            .key(key(ws))
            .arg(&self.me)
            .invoke_async(&mut conn)
            .await;
        if let Err(e) = released {
            tracing::debug!(%ws, error = %e, "live: the reconcile lease could not be given up");
        }
    }
}
