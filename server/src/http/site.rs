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
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;
use tower_http::services::{ServeDir, ServeFile};

/// The directory, under the site, of the content-hashed files.
pub(super) const HASHED_DIR: &str = "/assets/";

const IMMUTABLE: HeaderValue = HeaderValue::from_static("public, max-age=31536000, immutable");
const REVALIDATE: HeaderValue = HeaderValue::from_static("no-cache");

/// The site's directory, sending a file's `.br` or `.gz` copy to a request that accepts it.
pub(super) fn dir(site: &Path) -> ServeDir {
    ServeDir::new(site).precompressed_br().precompressed_gzip()
}

/// One file of the site, served like [`dir`] serves its files.
pub(super) fn file(path: &Path) -> ServeFile {
    ServeFile::new(path).precompressed_br().precompressed_gzip()
}

/// What a site answer may be kept for: a year for a hashed file that was found (its name
/// changes with its content), else only after revalidation, a 404 included (the file may be
/// there after the next deploy).
pub(super) fn cache_control(path: &str, found: bool) -> HeaderValue {
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
pub(super) async fn headers(req: Request, next: Next) -> Response {
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
    // The widget's types (pickup.d.ts): by its extension alone it would be sent as a video
    // (`.ts`, MPEG transport stream).
    if found && path.ends_with(".d.ts") {
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/typescript; charset=utf-8"),
        );
    }
    res
}

/// The CSP sources (`'sha256-…'`) of the inline scripts of the home page (`index.html`): its
/// head start, public/home.js, written in by scripts/site.mjs. Kept in step with the file on
/// disk, since `make widget` swaps a new site in under a running server
/// (scripts/build-widget.sh): the page is read again when its modification time changes.
pub(super) struct InlineScripts {
    path: PathBuf,
    seen: Mutex<(Option<SystemTime>, Arc<[String]>)>,
}

impl InlineScripts {
    pub(super) fn new(path: PathBuf) -> InlineScripts {
        let seen = Mutex::new((modified(&path), read_sources(&path)));
        InlineScripts { path, seen }
    }

    /// The sources for `res`'s policy. Only a page runs scripts, so only a page's answer looks
    /// at the file on disk again; every other file (the wasm, the glue, …) gets the sources last
    /// seen, without a `stat` on its way out.
    pub(super) fn for_answer<B>(&self, res: &axum::http::Response<B>) -> Arc<[String]> {
        let page = res
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/html"));
        if page {
            self.current()
        } else {
            self.lock().1.clone()
        }
    }

    /// The sources for the page as it is on disk now.
    pub(super) fn current(&self) -> Arc<[String]> {
        let now = modified(&self.path);
        let mut seen = self.lock();
        if seen.0 != now {
            *seen = (now, read_sources(&self.path));
        }
        seen.1.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (Option<SystemTime>, Arc<[String]>)> {
        self.seen
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// None if the page is not there; the page then still works without its script, as it does if
/// it cannot be read (logged).
fn read_sources(path: &Path) -> Arc<[String]> {
    match std::fs::read_to_string(path) {
        Ok(html) => inline_script_sources(&html).into(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Arc::new([]),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "cannot read the home page: its inline script will be refused");
            Arc::new([])
        }
    }
}

/// The hash source of each inline `<script>` (one with a `src` needs none), over its text exactly
/// as served, which is what a browser hashes. A script's text ends at the first `</script>`, as
/// the browser's parser ends it.
fn inline_script_sources(html: &str) -> Vec<String> {
    use base64::Engine;
    use sha2::Digest;
    let mut sources = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find("<script") {
        let Some((attrs, after)) = rest[at + "<script".len()..].split_once('>') else {
            break;
        };
        let Some((body, next)) = after.split_once("</script>") else {
            break;
        };
        let is_tag = attrs.is_empty() || attrs.starts_with(char::is_whitespace);
        if is_tag && !attrs.contains("src=") {
            let digest = sha2::Sha256::digest(body.as_bytes());
            let hash = base64::engine::general_purpose::STANDARD.encode(digest);
            sources.push(format!("'sha256-{hash}'"));
        }
        rest = next;
    }
    sources
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
        // Text that looks like a tag inside a script is the script's.
        // `printf "let t = '<script>x';" | openssl dgst -sha256 -binary | base64`
        assert_eq!(
            inline_script_sources("<script async>let t = '<script>x';</script>"),
            ["'sha256-p0M4yw2RL1bukK1OH8pr8N1Vhs02u1+tegimzMS/6Ag='"]
        );
    }

    #[test]
    fn inline_scripts_follow_the_page_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("index.html");
        let scripts = InlineScripts::new(page.clone());
        assert!(scripts.current().is_empty(), "no page yet");
        std::fs::write(&page, "<script>alert(1)</script>").unwrap();
        assert_eq!(
            &*scripts.current(),
            ["'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='"]
        );
        // A new site swapped in: a new file, so a new modification time.
        let next = dir.path().join("next.html");
        std::fs::write(&next, "<script></script>").unwrap();
        std::fs::rename(&next, &page).unwrap();
        let t = std::fs::metadata(&page).unwrap().modified().unwrap();
        std::fs::File::options()
            .write(true)
            .open(&page)
            .unwrap()
            .set_modified(t + std::time::Duration::from_secs(1))
            .unwrap();
        let answer = |content_type: &str| {
            axum::http::Response::builder()
                .header(header::CONTENT_TYPE, content_type)
                .body(())
                .unwrap()
        };
        // A file that is not a page looks at nothing on disk: the sources last seen.
        assert_eq!(
            &*scripts.for_answer(&answer("application/wasm")),
            ["'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='"]
        );
        assert_eq!(
            &*scripts.for_answer(&answer("text/html; charset=utf-8")),
            ["'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"]
        );
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
