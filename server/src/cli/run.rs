//! `pickup run`: a command run as an item.

use super::parse::positive_duration;
use super::producer::{NewItemArgs, ServerArgs};
use crate::index::Workspace;
use crate::producer::{Console, Item, Timing};
use app::contract::Status;
use clap::Args;
use std::time::Duration;

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub item: NewItemArgs,
    /// How often the item is told the command is still running.
    #[arg(long, default_value = "60s", value_parser = positive_duration)]
    pub heartbeat: Duration,
    /// At most one progress update per this.
    #[arg(long, default_value = "5s", value_parser = positive_duration)]
    pub progress_every: Duration,
    /// After the command ended, how long to keep trying to finish the item.
    #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
    pub finish_timeout: Duration,
    /// Leave Pickup's credentials (PICKUP_TOKEN, PICKUP_SECRET, PICKUP_STORE) in the command's
    /// environment. Without it the command gets none of them: it can report progress (its
    /// output, PICKUP_PROGRESS_FILE) but not write as the wrapper's token.
    #[arg(long)]
    pub pass_credentials: bool,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, num_args = 1.., value_name = "COMMAND")]
    pub command: Vec<std::ffi::OsString>,
}

/// `pickup run`: names are checked before the command starts (a typo is an error, not an
/// unreported run); the server is not needed to start it.
pub(super) async fn run_command(args: RunArgs, console: &Console) -> anyhow::Result<u8> {
    let (ws, new) = args.item.item(Status::Running, None);
    Workspace::parse(&ws)?;
    crate::index::SubKey::parse(&new.key)?;
    let item = Item {
        ws,
        new: crate::index::core::record::checked_new(&new)?,
    };
    let timing = Timing {
        heartbeat: args.heartbeat,
        progress_every: args.progress_every,
        finish_timeout: args.finish_timeout,
    };
    crate::producer::run(
        args.server.client()?,
        item,
        timing,
        args.command,
        args.pass_credentials,
        console,
    )
    .await
}
