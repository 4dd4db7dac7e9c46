//! Where everything lives and how long it is kept: the flags `serve` and `prune` share.

use crate::index::{Index, Limits};
use clap::Args;
use std::time::Duration;

#[derive(Args, Clone)]
pub struct StoreArgs {
    /// Where everything lives: file://PATH, memory://, s3://, gs://, az://
    #[arg(long, env = "PICKUP_STORE", default_value = "file://./data")]
    pub store: String,
    /// Time to live of a marker, by its name alone.
    #[arg(long, env = "PICKUP_TTL", default_value = "7d", value_parser = humantime::parse_duration)]
    pub ttl: Duration,
    /// How long a marker may wait for its record before it counts as dead.
    #[arg(long, env = "PICKUP_GRACE", default_value = "60s", value_parser = humantime::parse_duration)]
    pub grace: Duration,
    /// How long finished items stay on the list.
    #[arg(long, env = "PICKUP_KEEP_FINISHED", default_value = "24h", value_parser = humantime::parse_duration)]
    pub keep_finished: Duration,
    /// A running item whose heartbeat is older than this is shown as stalled.
    #[arg(long, env = "PICKUP_STALE_AFTER", default_value = "15m", value_parser = humantime::parse_duration)]
    pub stale_after: Duration,
    /// How far servers' clocks may disagree. Ids dated later than now plus this are refused.
    #[arg(long, env = "PICKUP_MAX_SKEW", default_value = "2m", value_parser = humantime::parse_duration)]
    pub max_skew: Duration,
    /// Cards per page unless the caller asks otherwise (at most 50).
    #[arg(long, env = "PICKUP_CAP", default_value_t = app::contract::DEFAULT_CAP, value_parser = clap::value_parser!(u32).range(i64::from(app::contract::MIN_CAP)..=i64::from(app::contract::MAX_CAP)))]
    pub cap: u32,
}

impl StoreArgs {
    pub(super) fn limits(&self) -> Limits {
        Limits {
            ttl_ms: self.ttl.as_millis() as u64,
            grace_ms: self.grace.as_millis() as u64,
            keep_finished_ms: self.keep_finished.as_millis() as u64,
            stale_after_ms: self.stale_after.as_millis() as u64,
            max_skew_ms: self.max_skew.as_millis() as u64,
        }
    }

    pub fn index(&self) -> anyhow::Result<Index> {
        let clock = std::sync::Arc::new(crate::index::SystemClock);
        crate::wiring::index(&self.store, self.limits(), self.cap, clock)
    }
}
