//! Which links a card may carry: the one rule the server checks an item's `url` by when it is
//! written, and the widget applies again to what it reads, since it must not trust the store.
//! Only the last step, whether an absolute URL is http(s) with a host, needs a URL parser, and
//! it is the caller's: the browser's own in the widget (it is what follows the link), the `url`
//! crate on the server.

/// The longest link stored or shown, in bytes.
pub const MAX_URL_CHARS: usize = 2048;

/// A character no stored text may hold: control characters, and the bidirectional controls
/// that make text display in another order than it is stored (U+202E turns `fdp.exe` into
/// `exe.pdf` on screen).
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// `text` as the widget shows it (a title, an owner's name): without the characters no stored
/// text may hold. The server refuses them on write, but a record written before that rule, or
/// by another producer straight into the store, may still carry them; shown, a bidirectional
/// control would make a title read as another.
pub fn shown_text(text: &str) -> String {
    text.chars().filter(|c| !is_unsafe_char(*c)).collect()
}

/// `url` trimmed, when a card may link to it: a path that starts with one '/', or an absolute
/// URL that `http_with_host` says is http(s) with a host; never with whitespace, a control or
/// bidirectional-control character or a backslash inside (browsers read `/\evil.example` as
/// `//evil.example`, and `https://evil.example\@good.example` opens evil.example).
pub fn safe_link(url: &str, http_with_host: impl FnOnce(&str) -> bool) -> Option<&str> {
    let u = url.trim();
    let refused = |c: char| is_unsafe_char(c) || c.is_whitespace() || c == '\\';
    if u.is_empty() || u.len() > MAX_URL_CHARS || u.chars().any(refused) {
        return None;
    }
    let ok = match u.strip_prefix('/') {
        Some(path) => !path.starts_with('/'),
        None => http_with_host(u),
    };
    ok.then_some(u)
}

#[cfg(test)]
mod tests {
    use super::{safe_link, shown_text};

    #[test]
    fn shown_text_has_no_control_or_bidirectional_control() {
        assert_eq!(
            shown_text("fdp\u{202E}.exe\u{2066}\u{200F}\u{061C}\u{7}"),
            "fdp.exe"
        );
        assert_eq!(shown_text("Train — EU ✓"), "Train — EU ✓");
    }

    #[test]
    fn paths_and_web_urls_only() {
        let web = |u: &str| u.starts_with("https://") && u.len() > "https://".len();
        assert_eq!(safe_link("  /runs/7 ", web), Some("/runs/7"));
        assert_eq!(
            safe_link("https://ci.example/1", web),
            Some("https://ci.example/1")
        );
        for refused in [
            "",
            "//evil.example",
            "/\\evil.example",
            "javascript:alert(1)",
            "/a b",
            "/a\u{202E}b",
            "https://x.example\\@y",
        ] {
            assert_eq!(safe_link(refused, web), None, "{refused:?}");
        }
        assert_eq!(safe_link(&format!("/{}", "a".repeat(2048)), web), None);
    }
}
