//! The widget's files from the app in this process, with a site directory made here:
//! precompressed copies chosen by `Accept-Encoding` (sent as they are, with `Vary`), hashed
//! files kept for a year, stable names revalidated. The client decodes no encoding: bodies
//! are as they were sent.

use crate::common::client::{Answer, TestClient};
use crate::common::in_process::InProcess;
use axum::http::header::{
    HeaderName, ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, IF_MODIFIED_SINCE, LAST_MODIFIED,
    VARY,
};
use axum::http::StatusCode;
use std::path::Path;

const HASHED: &str = "assets/app-0123abcd_bg.wasm";
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// `name`, and beside it `.br` and `.gz` copies whose bodies say which one was sent (the
/// server must not look inside them, nor compress them again).
fn write_with_copies(site: &Path, name: &str) {
    let path = site.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        &path,
        format!(
            "identity body of {name}, long enough to compress: {}",
            "x".repeat(200)
        ),
    )
    .unwrap();
    std::fs::write(
        site.join(format!("{name}.br")),
        format!("br body of {name}"),
    )
    .unwrap();
    std::fs::write(
        site.join(format!("{name}.gz")),
        format!("gz body of {name}"),
    )
    .unwrap();
}

async fn site_server() -> (TestClient, InProcess, tempfile::TempDir) {
    let site = tempfile::tempdir().unwrap();
    for name in [HASHED, "pickup.js", "index.html", "embed.html"] {
        write_with_copies(site.path(), name);
    }
    // No precompressed copy: gzipped on the fly instead.
    std::fs::write(site.path().join("plain.js"), "let a = 1;\n".repeat(100)).unwrap();
    let server = InProcess::start(&["--site", site.path().to_str().unwrap()]).await;
    (server.client(), server, site)
}

async fn get(c: &TestClient, path: &str, accept: Option<&str>) -> Answer {
    let mut req = c.get(path);
    if let Some(accept) = accept {
        req = req.header(ACCEPT_ENCODING, accept);
    }
    req.send().await
}

fn header(res: &Answer, name: HeaderName) -> Option<&str> {
    res.header(name.as_str())
}

fn varies_by_encoding(res: &Answer) -> bool {
    res.headers.get_all(VARY).iter().any(|v| {
        v.to_str()
            .unwrap()
            .to_ascii_lowercase()
            .contains("accept-encoding")
    })
}

#[tokio::test]
async fn the_precompressed_copy_the_request_accepts_is_sent_as_it_is() {
    let (s, _server, _site) = site_server().await;
    let path = format!("/{HASHED}");
    for (accept, encoding, body) in [
        (Some("br, gzip"), Some("br"), format!("br body of {HASHED}")),
        (
            Some("gzip, deflate"),
            Some("gzip"),
            format!("gz body of {HASHED}"),
        ),
        (None, None, format!("identity body of {HASHED}")),
    ] {
        let res = get(&s, &path, accept).await;
        assert_eq!(res.status, StatusCode::OK, "{accept:?}");
        assert_eq!(header(&res, CONTENT_ENCODING), encoding, "{accept:?}");
        assert!(varies_by_encoding(&res), "{accept:?}: {:?}", res.headers);
        let text = res.text();
        assert!(text.starts_with(&body), "{accept:?}: {text}");
    }
    // The stable names too, the page at `/` and the example host page among them.
    for path in ["/", "/pickup.js", "/embed.html"] {
        let res = get(&s, path, Some("gzip, br")).await;
        assert_eq!(header(&res, CONTENT_ENCODING), Some("br"), "{path}");
        assert!(res.text().starts_with("br body of "), "{path}");
    }
}

#[tokio::test]
async fn a_file_with_no_precompressed_copy_is_still_gzipped() {
    let (s, _server, _site) = site_server().await;
    let res = get(&s, "/plain.js", Some("gzip")).await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(header(&res, CONTENT_ENCODING), Some("gzip"));
    assert!(varies_by_encoding(&res));
    let body = &res.body;
    assert_eq!(&body[..2], &[0x1f, 0x8b], "a gzip stream");
}

#[tokio::test]
async fn hashed_files_are_kept_for_a_year_and_stable_names_revalidated() {
    let (s, _server, _site) = site_server().await;
    let res = get(&s, &format!("/{HASHED}"), Some("br")).await;
    assert_eq!(header(&res, CACHE_CONTROL), Some(IMMUTABLE));

    for path in ["/", "/index.html", "/pickup.js", "/embed.html"] {
        let res = get(&s, path, Some("br")).await;
        assert_eq!(res.status, StatusCode::OK, "{path}");
        assert_eq!(header(&res, CACHE_CONTROL), Some("no-cache"), "{path}");
        let modified = header(&res, LAST_MODIFIED)
            .unwrap_or_else(|| panic!("{path}: no Last-Modified"))
            .to_string();
        let again = s
            .get(path)
            .header(ACCEPT_ENCODING, "br")
            .header(IF_MODIFIED_SINCE, &modified)
            .send()
            .await;
        assert_eq!(again.status, StatusCode::NOT_MODIFIED, "{path}");
        assert_eq!(header(&again, CACHE_CONTROL), Some("no-cache"), "{path}");
    }
    // A hashed name that is not there (an old page after a deploy) must not be kept.
    let res = get(&s, "/assets/app-ffff_bg.wasm", Some("br")).await;
    assert_eq!(res.status, StatusCode::NOT_FOUND);
    assert_eq!(header(&res, CACHE_CONTROL), Some("no-cache"));
    // The API is still never stored.
    let res = get(&s, "/readyz", Some("br")).await;
    assert_eq!(header(&res, CACHE_CONTROL), Some("no-store"));
}
