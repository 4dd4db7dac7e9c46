//! What operators read, over real HTTP from a real `pickup serve`: `/metrics` parsed with a
//! Prometheus text-format parser, and `/api/v1/openapi.json` parsed as OpenAPI 3.1 and checked
//! against the routes the server answers and the README's API list.

use crate::common;

use crate::common::client::token;
use crate::common::in_process::InProcess;
use crate::common::server::Server;
use crate::common::stream::Events;
use crate::common::wait::eventually;
use axum::http::{Method, StatusCode};
use openmetrics_parser::{MetricsExposition, PrometheusType, PrometheusValue};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

type Scrape = MetricsExposition<PrometheusType, PrometheusValue>;

async fn scrape(s: &Server) -> Scrape {
    let text = s.metrics().await;
    openmetrics_parser::prometheus::parse_prometheus(&text)
        .unwrap_or_else(|e| panic!("not the Prometheus text format: {e}\n{text}"))
}

/// The samples of `metric` whose labels include `labels`.
fn samples<'a>(
    scrape: &'a Scrape,
    metric: &str,
    labels: &[(&str, &str)],
) -> Vec<&'a PrometheusValue> {
    let Some(family) = scrape.families.get(metric) else {
        return Vec::new();
    };
    family
        .iter_samples()
        .filter(|s| {
            let set = s.get_labelset().unwrap();
            labels
                .iter()
                .all(|(k, v)| set.get_label_value(k) == Some(*v))
        })
        .map(|s| &s.value)
        .collect()
}

/// The value of the one sample of `metric` with these labels (0 when there is none).
fn value(scrape: &Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    let found = samples(scrape, metric, labels);
    assert!(found.len() <= 1, "{metric} {labels:?}: {found:?}");
    match found.first() {
        None => 0.0,
        Some(PrometheusValue::Counter(c)) => c.value.as_f64(),
        Some(PrometheusValue::Gauge(n) | PrometheusValue::Unknown(n)) => n.as_f64(),
        Some(other) => panic!("{metric}: not a number: {other:?}"),
    }
}

/// Scrapes until `done` holds, for at most 20 s: the deletes of a read run after its answer.
async fn scrape_until(s: &Server, what: &str, done: impl Fn(&Scrape) -> bool) -> Scrape {
    eventually(what, async || {
        let scraped = scrape(s).await;
        match done(&scraped) {
            true => Ok(scraped),
            false => Err("the scrapes said otherwise".into()),
        }
    })
    .await
}

async fn register(s: &Server, token: &str, ws: &str, key: &str, status: &str) -> StatusCode {
    let body = json!({"key": key, "title": "t", "status": status});
    s.client().registered(token, ws, &body).await.status
}

async fn recent(s: &Server, token: &str, ws: &str) -> usize {
    s.client().recent(token, ws, "").await.cards.len()
}

const ITEMS: &str = "/api/v1/workspaces/{ws}/items";
const RECENT: &str = "/api/v1/workspaces/{ws}/recent";
const HTTP: &str = "pickup_http_requests_total";

#[tokio::test]
async fn metrics_count_requests_registrations_cache_and_read_deletes() {
    // The cache keeps entries for an hour: a hit never depends on timing, only on writes.
    let s = Server::start(&[
        ("PICKUP_METRICS_ADDR", "127.0.0.1:0"),
        ("PICKUP_JANITOR_EVERY", "0s"),
        ("PICKUP_READ_CACHE", "1h"),
    ]);
    let token = s.token("ada", "acme", true);
    // A finished run and a newer one in flight: a read finds the older superseded and deletes it
    // after answering.
    assert_eq!(
        register(&s, &token, "acme", "nightly", "succeeded").await,
        StatusCode::CREATED
    );
    assert_eq!(
        register(&s, &token, "acme", "nightly", "running").await,
        StatusCode::CREATED
    );
    let bad = s
        .client()
        .registered(&token, "acme", &json!({"key": "k", "title": ""}))
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    let stranger = s.token("eve", "other", true);
    assert_eq!(
        register(&s, &stranger, "acme", "k", "running").await,
        StatusCode::FORBIDDEN
    );
    assert_eq!(recent(&s, &token, "acme").await, 1);
    let deleted = |sc: &Scrape, kind: &str| {
        value(
            sc,
            "pickup_deletions_total",
            &[("by", "read"), ("reason", "superseded"), ("kind", kind)],
        )
    };
    let after_prune = scrape_until(&s, "the superseded run deleted", |sc| {
        deleted(sc, "marker") == 1.0 && deleted(sc, "record") == 1.0
    })
    .await;
    assert_eq!(
        value(
            &after_prune,
            "pickup_deletions_total",
            &[
                ("by", "janitor"),
                ("reason", "superseded"),
                ("kind", "marker")
            ]
        ),
        0.0
    );
    // The prune moved the cache on; of three reads after it at least the last is a hit.
    for _ in 0..3 {
        assert_eq!(recent(&s, &token, "acme").await, 1);
    }
    assert_eq!(
        s.client().status("/no-such-file").await,
        StatusCode::NOT_FOUND
    );

    let m = scrape(&s).await;
    let requests = |route: &str, method: &str, status: &str| {
        value(
            &m,
            HTTP,
            &[("route", route), ("method", method), ("status", status)],
        )
    };
    assert_eq!(requests(ITEMS, "POST", "201"), 2.0);
    assert_eq!(requests(ITEMS, "POST", "400"), 1.0);
    assert_eq!(requests(ITEMS, "POST", "403"), 1.0);
    assert_eq!(requests(RECENT, "GET", "200"), 4.0);
    assert_eq!(requests("site", "GET", "404"), 1.0);
    // Routes are templates: no workspace name or id ever becomes a label value.
    for sample in m.families[HTTP].iter_samples() {
        let route = sample
            .get_labelset()
            .unwrap()
            .get_label_value("route")
            .unwrap()
            .to_string();
        assert!(!route.contains("acme"), "a raw path as a label: {route}");
    }
    let registrations =
        |outcome: &str| value(&m, "pickup_registrations_total", &[("outcome", outcome)]);
    assert_eq!(registrations("created"), 2.0);
    assert_eq!(registrations("invalid_body"), 1.0);
    assert_eq!(registrations("forbidden"), 1.0);
    let lookups = |cache: &str, result: &str| {
        value(
            &m,
            "pickup_cache_lookups_total",
            &[("cache", cache), ("result", result)],
        )
    };
    assert!(lookups("list", "hit") >= 1.0, "no cached listing served");
    assert!(
        lookups("list", "miss") >= 2.0,
        "the first read and the one after the prune load"
    );
    assert!(value(&m, "pickup_store_requests_total", &[("op", "list")]) >= 2.0);
    // Latencies are histograms (buckets Prometheus can add up across servers), not summaries.
    for (metric, labels) in [
        ("pickup_store_request_seconds", vec![("op", "put")]),
        (
            "pickup_http_request_seconds",
            vec![("route", ITEMS), ("method", "POST")],
        ),
    ] {
        let found = samples(&m, metric, &labels);
        let [PrometheusValue::Histogram(h)] = found.as_slice() else {
            panic!("{metric} {labels:?} is not one histogram: {found:?}");
        };
        assert!(h.buckets.len() > 5, "{h:?}");
        assert!(h.count.unwrap() >= 2, "{h:?}");
    }
    // Every metric has its HELP text, from the one list in pickup::metrics.
    for metric in pickup::metrics::ALL {
        if let Some(family) = m.families.get(metric.name) {
            assert_eq!(family.help, metric.help, "{}", metric.name);
        }
    }
}

#[tokio::test]
async fn metrics_count_janitor_deletes_by_reason() {
    let s = Server::start(&[
        ("PICKUP_METRICS_ADDR", "127.0.0.1:0"),
        ("PICKUP_JANITOR_EVERY", "200ms"),
    ]);
    let token = s.token("ada", "acme", true);
    // A finished run and a newer one, and no read: only the janitor can find the older superseded.
    assert_eq!(
        register(&s, &token, "acme", "nightly", "succeeded").await,
        StatusCode::CREATED
    );
    assert_eq!(
        register(&s, &token, "acme", "nightly", "running").await,
        StatusCode::CREATED
    );
    let janitor = |sc: &Scrape, kind: &str| {
        value(
            sc,
            "pickup_deletions_total",
            &[("by", "janitor"), ("reason", "superseded"), ("kind", kind)],
        )
    };
    // Its owner marker goes in the same sweep, under its own reason.
    let owner_marker = |sc: &Scrape| {
        value(
            sc,
            "pickup_deletions_total",
            &[
                ("by", "janitor"),
                ("reason", "orphan_owner_marker"),
                ("kind", "owner_marker"),
            ],
        )
    };
    let m = scrape_until(&s, "the janitor deleted the superseded run", |sc| {
        janitor(sc, "marker") == 1.0 && janitor(sc, "record") == 1.0 && owner_marker(sc) == 1.0
    })
    .await;
    // Nothing was found dead by a read: there was none.
    let by_read: f64 = samples(&m, "pickup_deletions_total", &[("by", "read")]).len() as f64;
    assert_eq!(by_read, 0.0);
    assert_eq!(
        value(&m, "pickup_deletion_failures_total", &[("by", "janitor")]),
        0.0
    );
}

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

#[tokio::test]
async fn json_logs_are_one_object_per_line_with_the_request_id() {
    // No index.html in its site: the server warns before it says it listens. tower_http at
    // debug logs each answer, inside the request's span (at info), before the answer is sent.
    let s = Server::start(&[
        ("PICKUP_LOG", "info,tower_http=debug"),
        ("PICKUP_LOG_FORMAT", "json"),
    ]);
    let res = s
        .client()
        .get("/healthz")
        .header("x-request-id", "trace-me-42")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);
    let log = s.log();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let warning = lines
        .iter()
        .find(|l| {
            l["fields"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("no index.html"))
        })
        .unwrap_or_else(|| panic!("no warning about the site: {log}"));
    assert_eq!(warning["level"], "WARN");
    assert!(warning["timestamp"].is_string() && warning["fields"]["site"].is_string());
    let answered = lines
        .iter()
        .find(|l| l["span"]["request_id"] == "trace-me-42")
        .unwrap_or_else(|| panic!("no line in the request's span: {log}"));
    assert_eq!(answered["span"]["uri"], "/healthz");

    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_pickup"))
        .args(["token", "--sub", "a", "--ws", "acme"])
        .env("PICKUP_LOG_FORMAT", "xml")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        stderr.contains("PICKUP_LOG_FORMAT") || stderr.contains("--log-format"),
        "{stderr}"
    );
    assert!(
        stderr.contains("json") && stderr.contains("text"),
        "{stderr}"
    );
}

#[test]
fn text_logs_to_a_file_carry_no_colour_codes() {
    let s = Server::start(&[("PICKUP_LOG", "warn")]);
    let log = s.log();
    assert!(log.contains("no index.html"), "{log}");
    assert!(
        !log.contains('\u{1b}'),
        "ANSI escapes in a log file: {log:?}"
    );
}

/// The sum of every sample of `metric` with these labels (a counter with a label more).
fn total(scrape: &Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    samples(scrape, metric, labels)
        .iter()
        .map(|v| match v {
            PrometheusValue::Counter(c) => c.value.as_f64(),
            other => panic!("{metric}: not a counter: {other:?}"),
        })
        .sum()
}

/// A reconcile lists the workspace once (`ws/{ws}/`, every kind of key in one listing), not
/// once per kind: without a bus a watched workspace is reconciled every PICKUP_LIVE_EVERY, and
/// nothing else lists the store while nobody writes.
#[tokio::test]
async fn a_reconcile_is_one_listing_of_the_workspace() {
    let s = Server::start(&[
        ("PICKUP_METRICS_ADDR", "127.0.0.1:0"),
        ("PICKUP_LIVE_EVERY", "50ms"),
    ]);
    let writer = s.token("prod", "acme", true);
    let viewer = s.token("ada", "acme", false);
    let c = s.client();
    let id = c.register(&writer, "acme", "a").await.id;
    c.register(&writer, "acme", "b").await;
    let dismissed = c
        .post(&format!("/api/v1/workspaces/acme/items/{id}/dismiss"))
        .bearer(&viewer)
        .send()
        .await;
    assert_eq!(dismissed.status, StatusCode::NO_CONTENT);
    let mut events = Events::open(&s.url, "acme", &viewer).await;
    assert_eq!(events.page().await.len(), 1);

    const RECONCILES: &str = "pickup_live_reconciles_total";
    let lists = |m: &Scrape| value(m, "pickup_store_requests_total", &[("op", "list")]);
    let before = scrape(&s).await;
    let after = scrape_until(&s, "twenty more reconciles", |m| {
        total(m, RECONCILES, &[]) >= total(&before, RECONCILES, &[]) + 20.0
    })
    .await;
    let reconciles = total(&after, RECONCILES, &[]) - total(&before, RECONCILES, &[]);
    let listed = lists(&after) - lists(&before);
    // One reconcile may be counted in one scrape and list only after it.
    assert!(
        (listed - reconciles).abs() <= 1.0,
        "{listed} listings in {reconciles} reconciles"
    );
}
