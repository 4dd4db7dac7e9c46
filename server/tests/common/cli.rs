//! `pickup` subcommands run in this process, as the binary runs them (`pickup::cli::run` on the
//! parsed command line), for the tests where the command's work is the point, not its process
//! (those keep `super::server::pickup`: signals, output, exit codes, memory, environment).

use clap::Parser;
use std::process::ExitCode;

/// `pickup ARGS` (a producer's `item` or `run`, a `prune`, …): the exit code, or the error the
/// binary would print after `pickup: `.
pub async fn pickup(args: &[&str]) -> Result<ExitCode, String> {
    let cli = pickup::cli::Cli::try_parse_from(std::iter::once("pickup").chain(args.iter().copied()))
        .map_err(|e| e.to_string())?;
    pickup::cli::run(cli).await.map_err(|e| format!("{e:#}"))
}

/// `pickup ARGS` as a producer of the server at `url` with `token`.
pub async fn producer(url: &str, token: &str, args: &[&str]) -> Result<ExitCode, String> {
    let mut all = args.to_vec();
    // After the subcommand (and its own subcommand, for `item`): where the flags go.
    let at = if args.first() == Some(&"item") { 2 } else { 1 };
    all.splice(at..at, ["--server", url, "--token", token]);
    pickup(&all).await
}
