//! `pickup-bench`: Pickup's benchmarks (`make bench`).
//!
//! ```text
//! pickup-bench designs   # section 1: marker index vs naive list vs compare-and-set list
//! pickup-bench read      # section 2: `recent` vs the bare store work (the floor)
//! pickup-bench report    # BENCHMARKS.md and docs/bench/*.svg from target/bench/*.json
//! pickup-bench all       # designs, read, report
//! ```
//!
//! Run from the repository root. Azure (Azurite) and S3 (moto) are included when the variables
//! of `scripts/emulators.sh run -- …` are set, and skipped with a printed reason otherwise.

mod common;
mod designs;
mod latency;
mod lists;
mod read;
mod report;
mod stores;

use clap::{Parser, Subcommand};
use std::time::Instant;
use stores::Kind;

#[derive(Parser)]
#[command(
    name = "pickup-bench",
    about = "Pickup's benchmarks; writes BENCHMARKS.md"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// A smaller, faster run (a smoke test of the harness; its numbers are not for quoting).
    #[arg(long, global = true)]
    quick: bool,
    /// Only these stores (memory, memory+20ms, file, azurite, moto; or latency, azure, s3);
    /// default: all that are available (the read section leaves out memory+20ms: a fixed delay
    /// per request says nothing about a real store's listing cost).
    #[arg(long, global = true, value_delimiter = ',')]
    stores: Vec<String>,
    /// Section 1: only these numbers of producers (default 1, 8, 64).
    #[arg(long, global = true, value_delimiter = ',')]
    producers: Vec<usize>,
    /// Section 1: override the compare-and-set list's longest back-off after a lost race, in ms
    /// (default: scaled to the store's round trip, see designs::backoff).
    #[arg(long, global = true)]
    cas_backoff_cap_ms: Option<u64>,
}

#[derive(Subcommand)]
enum Command {
    /// Section 1: the designs under concurrent producers and a pruning reader.
    Designs,
    /// Section 2: the read path against the floor.
    Read,
    /// Write BENCHMARKS.md and the SVG plots from target/bench/*.json.
    Report,
    /// designs, read, report.
    All,
}

/// The stores a section runs on: those named, or its defaults.
fn kinds(cli: &Cli, defaults: &[Kind]) -> anyhow::Result<Vec<Kind>> {
    if cli.stores.is_empty() {
        return Ok(defaults.to_vec());
    }
    cli.stores
        .iter()
        .map(|s| {
            Kind::parse(s).ok_or_else(|| {
                anyhow::anyhow!("unknown store {s:?}: memory, memory+20ms, file, azurite or moto")
            })
        })
        .collect()
}

fn designs_kinds(cli: &Cli) -> anyhow::Result<Vec<Kind>> {
    kinds(cli, &Kind::all())
}

fn read_kinds(cli: &Cli) -> anyhow::Result<Vec<Kind>> {
    let defaults: Vec<Kind> = Kind::all()
        .into_iter()
        .filter(|k| *k != Kind::Latency)
        .collect();
    kinds(cli, &defaults)
}

fn designs_plan(quick: bool, producers: &[usize], cap_ms: Option<u64>) -> designs::Plan {
    designs::Plan {
        backoff_cap_ms: cap_ms,
        producers: if producers.is_empty() {
            vec![1, 8, 64]
        } else {
            producers.to_vec()
        },
        total: if quick {
            designs::quick_total
        } else {
            designs::default_total
        },
        deadline: if quick {
            designs::quick_deadline
        } else {
            designs::default_deadline
        },
    }
}

fn read_plan(quick: bool) -> read::Plan {
    read::Plan {
        sizes: vec![100, 1_000, 10_000, 100_000],
        max: if quick {
            read::quick_max
        } else {
            read::default_max
        },
        reps: if quick {
            read::quick_reps
        } else {
            read::default_reps
        },
    }
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let started = Instant::now();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command {
        Command::Designs => {
            rt.block_on(designs::run(
                &designs_plan(cli.quick, &cli.producers, cli.cas_backoff_cap_ms),
                &designs_kinds(&cli)?,
            ))?;
        }
        Command::Read => {
            rt.block_on(read::run(&read_plan(cli.quick), &read_kinds(&cli)?))?;
        }
        Command::Report => report::write()?,
        Command::All => {
            rt.block_on(designs::run(
                &designs_plan(cli.quick, &cli.producers, cli.cas_backoff_cap_ms),
                &designs_kinds(&cli)?,
            ))?;
            rt.block_on(read::run(&read_plan(cli.quick), &read_kinds(&cli)?))?;
            report::write()?;
        }
    }
    eprintln!(
        "pickup-bench: done in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
