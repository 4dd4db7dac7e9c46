//! What the operator's settings allow a browser to do with this server's pages: the site's
//! Content-Security-Policy, and which other origins may call the API (CORS). Parsed once at
//! start-up; a setting that could break a header is refused with its fix.

use axum::http::HeaderValue;

/// The site's policy: scripts from this origin only (and the widget's WebAssembly, and the
/// `inline_scripts` sources: the home page's own script, by its hash), no plugins,
/// no `<base>`, framed only by `frame_ancestors`. The example embed page may also call another
/// Pickup server (`connect-src`), since its URL may name one.
pub(crate) fn content_security_policy(
    frame_ancestors: &str,
    embed_page: bool,
    inline_scripts: &[String],
) -> HeaderValue {
    let scripts: String = inline_scripts.iter().map(|s| format!(" {s}")).collect();
    let connect = if embed_page {
        "connect-src 'self' http: https:; "
    } else {
        ""
    };
    HeaderValue::from_str(&format!(
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'{scripts}; {connect}object-src 'none'; \
         base-uri 'none'; form-action 'self'; frame-ancestors {frame_ancestors}"
    ))
    .expect("frame_ancestors was checked by http::frame_ancestors")
}

/// `PICKUP_FRAME_ANCESTORS`: CSP sources separated by spaces (`'self'`, `'none'`,
/// `https://app.example.com`, …). Refused if it could end the directive or break the header.
pub(crate) fn frame_ancestors(raw: &str) -> anyhow::Result<String> {
    let value = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    if value.is_empty()
        || value
            .chars()
            .any(|c| !(c.is_ascii_graphic() || c == ' ') || c == ';' || c == ',')
    {
        anyhow::bail!(
            "PICKUP_FRAME_ANCESTORS {raw:?} is not a list of CSP sources: write e.g. \"'self'\", \"'none'\" or \"'self' https://app.example.com\", separated by spaces"
        );
    }
    Ok(value)
}

/// `PICKUP_ALLOWED_ORIGINS`: comma-separated origins, each trimmed; empty entries are ignored.
/// `*` and anything that is not exactly `scheme://host[:port]` are refused with an error that
/// names the entry.
pub(crate) fn allowed_origins(raw: &str) -> anyhow::Result<Vec<HeaderValue>> {
    let mut out = Vec::new();
    for entry in raw.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        if entry == "*" {
            anyhow::bail!(
                "PICKUP_ALLOWED_ORIGINS may not be \"*\": tokens travel in the Authorization header, so list each origin whose pages may call this server, e.g. https://app.example.com"
            );
        }
        let origin = url::Url::parse(entry)
            .ok()
            .map(|u| u.origin())
            .filter(|o| o.is_tuple())
            .map(|o| o.ascii_serialization());
        match origin {
            Some(o) if o.eq_ignore_ascii_case(entry) => {
                out.push(HeaderValue::from_str(&o).expect("an origin is a valid header value"))
            }
            Some(o) => anyhow::bail!(
                "PICKUP_ALLOWED_ORIGINS entry {entry:?} is not an origin: write scheme://host[:port] with no path (did you mean {o}?)"
            ),
            None => anyhow::bail!(
                "PICKUP_ALLOWED_ORIGINS entry {entry:?} is not an origin: write scheme://host[:port], e.g. https://app.example.com"
            ),
        }
    }
    Ok(out)
}
