//! What Pickup takes from a peer over HTTP (the identity provider's JWKS, a Pickup server's
//! answers to the producer client): a body bounded while it is read, and text made safe to
//! show on a terminal.

use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use thiserror::Error;

/// Why a peer's answer could not be taken whole.
#[derive(Debug, Error)]
pub(crate) enum AnswerError {
    /// The body went past the limit: reading stopped there, nothing past it was kept.
    #[error("the answer is larger than {limit} bytes")]
    TooLarge { limit: usize },
    /// The connection failed while the body came.
    #[error("reading the answer: {0}")]
    Read(String),
}

/// The whole body of `res`, refused as soon as it passes `limit` bytes: at most `limit` bytes
/// (and one chunk) are ever held, whatever the peer sends or announces.
pub(crate) async fn read_bounded(
    res: reqwest::Response,
    limit: usize,
) -> Result<Bytes, AnswerError> {
    // An announced length over the limit is refused before a byte is read.
    if res.content_length().is_some_and(|n| n > limit as u64) {
        return Err(AnswerError::TooLarge { limit });
    }
    let body = Limited::new(reqwest::Body::from(res), limit);
    match body.collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
            Err(AnswerError::TooLarge { limit })
        }
        Err(e) => Err(AnswerError::Read(error_chain(e.as_ref()))),
    }
}

/// The error and its causes on one line (reqwest's own message hides the cause).
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// `text` with every character that could act on a terminal escaped (`\u{1b}`, `\r`, `\n`,
/// the bidirectional controls that reorder what follows): a peer's message is shown as what it
/// says, never as what it would do to the screen.
pub(crate) fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || is_bidi_control(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Unicode's bidirectional formatting characters (UAX #9), which `char::is_control` does not
/// cover (they are format characters, not controls).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_escapes_what_acts_on_a_terminal_and_keeps_the_rest() {
        assert_eq!(
            printable("no \u{1b}[31mred\r\nline\t\u{202E}evil\u{2069} é “ok”"),
            "no \\u{1b}[31mred\\r\\nline\\t\\u{202e}evil\\u{2069} é “ok”"
        );
        assert_eq!(
            printable("the key \"k1\" is gone"),
            "the key \"k1\" is gone"
        );
    }
}
