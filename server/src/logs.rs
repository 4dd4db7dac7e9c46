//! The server's log: `tracing` events on standard error, filtered by `PICKUP_LOG`, as text for
//! people or one JSON object per line for log pipelines (`PICKUP_LOG_FORMAT=json`).

use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, `fields` (with `message`), and
    /// `span` / `spans` (a request's `method`, `uri` and `request_id`).
    Json,
}

/// Install the process's subscriber. The filter comes from `PICKUP_LOG` (default `info`, with
/// tower_http's per-request lines at `warn`).
pub fn init(format: LogFormat) {
    let filter =
        EnvFilter::try_from_env("PICKUP_LOG").unwrap_or_else(|_| "info,tower_http=warn".into());
    // Colours only for a terminal: a log file or a collector gets plain text.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder
            .json()
            .with_current_span(true)
            .with_span_list(true)
            .init(),
    }
}
