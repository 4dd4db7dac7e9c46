//! The `pickup` command line (clap): every flag also reads its `PICKUP_*` environment variable.
//!
//! One file per subcommand (`serve`, `demo`, `token`, `prune`, `run`, `item`), beside what
//! they share: the store's flags (`store`), the identity provider's (`idp`), the producers'
//! (`producer`), the value parsers (`parse`); `config` maps `serve`'s flags to a
//! [`crate::Config`], refused by `data_loss` when the settings can lose registrations.

mod config;
mod data_loss;
mod demo;
mod idp;
mod item;
mod parse;
mod producer;
mod prune;
mod run;
mod serve;
mod store;
mod token;

pub use demo::DemoArgs;
pub use idp::IdpArgs;
pub use item::{ItemArgs, ItemCommand, ItemFinishArgs, ItemIdArgs, ItemStartArgs, ItemUpdateArgs};
pub use producer::{NewItemArgs, ServerArgs};
pub use prune::PruneArgs;
pub use run::RunArgs;
pub use serve::ServeArgs;
pub use store::StoreArgs;
pub use token::TokenArgs;

pub use crate::producer::Console;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "pickup",
    version,
    about = "Pick up where you left off: a shared recent-items widget and its server"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// How the log on standard error is written: text, or one JSON object per line.
    #[arg(
        long,
        env = "PICKUP_LOG_FORMAT",
        value_enum,
        default_value_t,
        global = true
    )]
    pub log_format: crate::logs::LogFormat,
}

#[derive(Subcommand)]
pub enum Command {
    /// Serve the widget, its server functions and the REST API.
    Serve(ServeArgs),
    /// Print a token (the JWT alone) for scripts and tests.
    Token(TokenArgs),
    /// Sweep workspaces: delete expired, superseded and dead markers and orphan dismissals.
    Prune(PruneArgs),
    /// Seed a demo workspace, keep a few of its items working, print a link that opens it
    /// signed in, and serve.
    Demo(DemoArgs),
    /// Run a command as an item: registered, kept alive, finished with the command's outcome.
    Run(RunArgs),
    /// Register, change, read or remove one item (for scripts).
    Item(ItemArgs),
}

/// Installs the process's log subscriber, as `log_format` says (the binary's first step).
pub fn init_logs(log_format: crate::logs::LogFormat) {
    crate::logs::init(log_format);
}

/// Runs the subcommand, writing on the process's standard output and error. `pickup run`
/// exits with its command's status; the others succeed or fail.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    run_on(cli, &Console::std()).await
}

/// [`run`], writing on `console` (a test's buffers: the command in the test's own process).
pub async fn run_on(cli: Cli, console: &Console) -> anyhow::Result<ExitCode> {
    let done = match cli.command {
        Command::Run(args) => {
            return run::run_command(args, console).await.map(ExitCode::from);
        }
        Command::Item(args) => item::item(args.command, console).await,
        Command::Serve(args) => serve::command(args, None, console).await,
        Command::Demo(args) => demo::demo(args, console).await,
        Command::Token(t) => token::token(t, console),
        Command::Prune(p) => prune::prune(p, console).await,
    };
    done.map(|()| ExitCode::SUCCESS)
}
