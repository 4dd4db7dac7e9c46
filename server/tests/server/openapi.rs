//! The REST API's OpenAPI document (`/api/v1/openapi.json`), from the app in this process:
//! parsed as OpenAPI 3.1 and checked against the routes the server answers, the routes the
//! code declares, and docs/API.md's list.

use crate::common;
use crate::common::client::token;
use crate::common::in_process::InProcess;
use axum::http::{Method, StatusCode};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

/// The methods an OpenAPI path item documents.
fn documented(item: &oas3::spec::PathItem) -> BTreeSet<Method> {
    [
        (Method::GET, item.get.is_some()),
        (Method::PUT, item.put.is_some()),
        (Method::POST, item.post.is_some()),
        (Method::DELETE, item.delete.is_some()),
        (Method::PATCH, item.patch.is_some()),
    ]
    .into_iter()
    .filter_map(|(m, on)| on.then_some(m))
    .collect()
}

/// A path template with real names in it: `{ws}` a workspace, `{id}` a well-formed id.
fn concrete(template: &str) -> String {
    template
        .replace("{ws}", "acme")
        .replace("{id}", "8200000000000_nightly")
}

#[tokio::test]
async fn openapi_document_is_valid_3_1_and_matches_the_routes_and_the_readme() {
    let s = InProcess::start(&[]).await;
    let c = s.client();
    // Public: no token.
    let res = c.get("/api/v1/openapi.json").send().await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.header("content-type"), Some("application/json"));
    let text = res.text();
    let spec = oas3::from_json(&text).expect("an OpenAPI 3.1 document");
    assert!(spec.openapi.starts_with("3.1"), "{}", spec.openapi);
    let paths = spec.paths.clone().expect("paths");
    let doc: BTreeMap<String, BTreeSet<Method>> = paths
        .iter()
        .map(|(path, item)| (path.clone(), documented(item)))
        .collect();

    // Every documented operation is answered by a route (not the catch-all's "no such route",
    // not 405), and every other method on a documented path is 405: the methods match both ways.
    // (A live stream's answer is its head: the client does not wait for a stream to end.)
    let token = token("ada", "acme", true);
    for (path, methods) in &doc {
        assert!(path.starts_with("/api/v1/"), "{path}");
        for method in [
            Method::GET,
            Method::PUT,
            Method::POST,
            Method::DELETE,
            Method::PATCH,
        ] {
            let res = c
                .request(method.clone(), &concrete(path))
                .bearer(&token)
                .json(&json!({}))
                .send()
                .await;
            let (status, body) = (res.status, res.text());
            if methods.contains(&method) {
                assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
                assert!(!body.contains("no such route"), "{method} {path}: {body}");
            } else {
                assert_eq!(
                    status,
                    StatusCode::METHOD_NOT_ALLOWED,
                    "{method} {path} is answered but not documented"
                );
            }
        }
    }

    // Each operation documents its errors as ApiError, and the bearer scheme guards all but
    // the document itself.
    let components = spec.components.as_ref().expect("components");
    assert!(components.schemas.contains_key("ApiError"));
    assert!(components.security_schemes.contains_key("bearer"));
    for (path, item) in paths.iter() {
        for (method, op) in item.methods() {
            let responses = op.responses.as_ref().expect("responses");
            let statuses: BTreeSet<&str> = responses.keys().map(String::as_str).collect();
            if path == "/api/v1/openapi.json" {
                // `security: [{}]`: the empty requirement, no token.
                assert!(
                    op.security.len() == 1 && op.security[0].0.is_empty(),
                    "the document is public: {:?}",
                    op.security
                );
                continue;
            }
            assert!(statuses.contains("401"), "{method} {path}: {statuses:?}");
            let text = serde_json::to_string(&responses["401"]).unwrap();
            assert!(
                text.contains("#/components/schemas/ApiError"),
                "{method} {path}: {text}"
            );
        }
    }
    assert!(
        !spec.security.is_empty(),
        "the bearer requirement is global"
    );

    // No route under /api/v1 bypasses the documented router: in the server's source, a path
    // under /api/v1 is written only as a `#[utoipa::path]`'s `path = "…"`.
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    for file in common::server::walk(std::path::Path::new(src)) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.contains("\"/api/v1/") {
                assert!(
                    line.trim_start().starts_with("path = \"/api/v1/"),
                    "{}:{}: a route under /api/v1 outside utoipa's router: {line}",
                    file.display(),
                    n + 1
                );
            }
        }
    }

    // docs/API.md lists the same routes.
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/API.md")).unwrap();
    let mut listed: BTreeMap<String, BTreeSet<Method>> = BTreeMap::new();
    for line in readme.lines() {
        let mut words = line.split_whitespace();
        let (Some(method), Some(path)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(method) = method.parse::<Method>() else {
            continue;
        };
        if ["GET", "PUT", "POST", "DELETE", "PATCH"].contains(&method.as_str())
            && path.starts_with("/api/v1/")
        {
            let path = path.split('?').next().unwrap().to_string();
            listed.entry(path).or_default().insert(method);
        }
    }
    assert_eq!(
        listed, doc,
        "docs/API.md's API list and the OpenAPI document differ"
    );
}
