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

impl DemoArgs {
    fn pace(&self) -> crate::demo::Pace {
        crate::demo::Pace {
            every: self.every,
            run_for: self.run_for,
        }
    }

    /// `pickup demo`'s flags as a configuration (`pickup serve`'s, and the demo's pace), read
    /// as [`ServeArgs::parse_config`] reads them: what an in-process demo is built from.
    pub fn parse_config<I, T>(args: I) -> anyhow::Result<crate::Config>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        #[derive(clap::Parser)]
        struct Demo {
            #[command(flatten)]
            args: DemoArgs,
        }
        let argv = std::iter::once("demo".into()).chain(args.into_iter().map(Into::into));
        let args = <Demo as clap::Parser>::try_parse_from(argv)?.args;
        let mut config = args.serve.config()?;
        config.demo = Some(args.pace());
        Ok(config)
    }
}

pub(super) async fn demo(args: DemoArgs, console: &crate::producer::Console) -> anyhow::Result<()> {
    let pace = args.pace();
    command(args.serve, Some(pace), console).await
}
