//! `pickup demo`: `pickup serve` with the demo workspace seeded and kept working.

use super::serve::{command, ServeArgs};
use clap::Args;
use std::time::Duration;

#[derive(Args, Clone)]
pub struct DemoArgs {
    #[command(flatten)]
    pub serve: ServeArgs,
    /// How often the demo's running items beat and move on (under half of PICKUP_STALE_AFTER).
    #[arg(long = "demo-every", env = "PICKUP_DEMO_EVERY", default_value = "3s", value_parser = humantime::parse_duration)]
    pub every: Duration,
    /// How long one of the demo's runs takes from start to done.
    #[arg(long = "demo-run-for", env = "PICKUP_DEMO_RUN_FOR", default_value = "90s", value_parser = humantime::parse_duration)]
    pub run_for: Duration,
}

pub(super) async fn demo(args: DemoArgs) -> anyhow::Result<()> {
    let pace = crate::demo::Pace {
        every: args.every,
        run_for: args.run_for,
    };
    command(args.serve, Some(pace)).await
}
