//! The server's log: `tracing` events on standard error, filtered by `PICKUP_LOG`, as text for
//! people or one JSON object per line for log pipelines (`PICKUP_LOG_FORMAT=json`).
//!
//! In text, a field's value is written bare only when it is one plain token; anything else
//! (a space, `=`, a quote, a control character) is quoted and escaped, so a value a peer chose
//! (an error's text, a header) can never read as fields or lines of its own.

use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::io::IsTerminal;
use tracing::field::{Field, Visit};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::FormatFields;
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
pub(crate) fn init(format: LogFormat) {
    let filter =
        EnvFilter::try_from_env("PICKUP_LOG").unwrap_or_else(|_| "info,tower_http=warn".into());
    // Colours only for a terminal: a log file or a collector gets plain text.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.fmt_fields(QuotedFields).init(),
        LogFormat::Json => builder
            .json()
            .with_current_span(true)
            .with_span_list(true)
            .init(),
    }
}

/// Text fields as `name=value`, the value quoted unless it is one plain token (see the module).
struct QuotedFields;

impl<'w> FormatFields<'w> for QuotedFields {
    fn format_fields<R: RecordFields>(&self, mut writer: Writer<'w>, fields: R) -> fmt::Result {
        let mut visitor = Quoting {
            writer: &mut writer,
            result: Ok(()),
            first: true,
        };
        fields.record(&mut visitor);
        visitor.result
    }
}

struct Quoting<'a, 'w> {
    writer: &'a mut Writer<'w>,
    result: fmt::Result,
    first: bool,
}

impl Quoting<'_, '_> {
    fn field(&mut self, field: &Field, text: &str) {
        if self.result.is_err() {
            return;
        }
        let sep = if std::mem::take(&mut self.first) {
            ""
        } else {
            " "
        };
        self.result = if field.name() == "message" {
            // The message is the code's sentence: bare, but never a line break or an escape.
            write!(self.writer, "{sep}{}", crate::peer::printable(text))
        } else {
            write!(self.writer, "{sep}{}={}", field.name(), quoted(text))
        };
    }
}

impl Visit for Quoting<'_, '_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.field(field, value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let mut text = String::new();
        let _ = write!(text, "{value:?}");
        self.field(field, &text);
    }
}

/// `text` bare when it is one plain token, else as a quoted, escaped string.
fn quoted(text: &str) -> Cow<'_, str> {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b'"' | b'=' | b'\\'));
    if plain {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(format!("{text:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plain_token_is_bare() {
        assert_eq!(quoted("0b6c2c1e-1f3a"), "0b6c2c1e-1f3a");
        assert_eq!(quoted("/api/recent?cap=5"), "\"/api/recent?cap=5\"");
        assert_eq!(
            quoted("1234 request_id=forged error=\"all good\""),
            r#""1234 request_id=forged error=\"all good\"""#
        );
        assert_eq!(quoted("a\nb"), r#""a\nb""#);
        assert_eq!(quoted(""), r#""""#);
    }
}
