//! The widget's static files as a browser should get them: the Brotli or gzip copy the build
//! wrote beside a file (scripts/site.mjs) when the request accepts it, and caching by
//! name. Files under `/assets/` carry a hash of their content in their name (scripts/site.mjs),
//! so a browser may keep them for a year without asking; every other file has a
//! stable name that host pages embed (`pickup.js`, `pickup.css`, `index.html`, `embed.*`), so a
//! browser revalidates it each time (`Last-Modified`, answered with 304 when unchanged).

use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use std::path::Path;
use tower_http::services::{ServeDir, ServeFile};

/// The directory, under the site, of the content-hashed files.
pub const HASHED_DIR: &str = "/assets/";

const IMMUTABLE: HeaderValue = HeaderValue::from_static("public, max-age=31536000, immutable");
const REVALIDATE: HeaderValue = HeaderValue::from_static("no-cache");

/// The site's directory, sending a file's `.br` or `.gz` copy to a request that accepts it.
pub fn dir(site: &Path) -> ServeDir {
    ServeDir::new(site).precompressed_br().precompressed_gzip()
}

/// One file of the site, served like [`dir`] serves its files.
pub fn file(path: &Path) -> ServeFile {
    ServeFile::new(path).precompressed_br().precompressed_gzip()
}

/// What a site answer may be kept for: a year for a hashed file that was found (its name
/// changes with its content), else only after revalidation, a 404 included (the file may be
/// there after the next deploy).
pub fn cache_control(path: &str, found: bool) -> HeaderValue {
    if found && path.starts_with(HASHED_DIR) {
        IMMUTABLE
    } else {
        REVALIDATE
    }
}

/// Middleware for the site's services: sets `Cache-Control` by [`cache_control`], and `Vary:
/// Accept-Encoding`, since the same URL answers with a different body by that header. (The
/// compression layer adds `Vary` only to what it compresses itself, not to a `.br` file sent
/// as it is.)
pub async fn headers(req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let mut res = next.run(req).await;
    let status = res.status();
    let found = status.is_success() || status == axum::http::StatusCode::NOT_MODIFIED;
    let h = res.headers_mut();
    h.insert(header::CACHE_CONTROL, cache_control(&path, found));
    let varies = h.get_all(header::VARY).iter().any(|v| {
        v.to_str()
            .is_ok_and(|v| v.to_ascii_lowercase().contains("accept-encoding"))
    });
    if !varies {
        h.append(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    res
}

/// The CSP sources (`'sha256-…'`) of the inline scripts of the page at `path`: the home page's
/// head start (public/home.js, written in by scripts/site.mjs). None if the page is not there;
/// the page then still works without it, as it does if it cannot be read (logged).
pub fn inline_scripts(path: &Path) -> Vec<String> {
    match std::fs::read_to_string(path) {
        Ok(html) => inline_script_sources(&html),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "cannot read the home page: its inline script will be refused");
            Vec::new()
        }
    }
}

/// The hash source of each inline `<script>` (one with a `src` needs none), over its text exactly
/// as served, which is what a browser hashes.
fn inline_script_sources(html: &str) -> Vec<String> {
    use base64::Engine;
    use sha2::Digest;
    html.split("<script")
        .skip(1)
        .filter_map(|rest| {
            let (attrs, rest) = rest.split_once('>')?;
            let is_tag = attrs.is_empty() || attrs.starts_with(char::is_whitespace);
            (is_tag && !attrs.contains("src=")).then_some(rest)?;
            rest.split_once("</script>")
        })
        .map(|(body, _)| {
            let digest = sha2::Sha256::digest(body.as_bytes());
            format!(
                "'sha256-{}'",
                base64::engine::general_purpose::STANDARD.encode(digest)
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_inline_script_by_its_hash() {
        // `printf 'alert(1)' | openssl dgst -sha256 -binary | base64`
        let page = r#"<head><script type="module" src="/pickup.js"></script></head>
            <body><script type="module" async>alert(1)</script><script></script></body>"#;
        assert_eq!(
            inline_script_sources(page),
            [
                "'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='",
                "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
            ]
        );
        assert!(inline_script_sources("<p>no script</p>").is_empty());
    }

    #[test]
    fn only_found_hashed_files_are_immutable() {
        let immutable = |p, found| cache_control(p, found) == IMMUTABLE;
        assert!(immutable("/assets/app-1f2e3d_bg.wasm", true));
        assert!(!immutable("/assets/app-1f2e3d_bg.wasm", false));
        for stable in [
            "/",
            "/index.html",
            "/pickup.js",
            "/pickup.css",
            "/embed.html",
        ] {
            assert!(!immutable(stable, true), "{stable}");
        }
        // Not the directory merely named in a path.
        assert!(!immutable("/x/assets/app.js", true));
    }
}
