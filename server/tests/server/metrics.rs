//! What operators count, from a real `pickup serve` (a process: its metrics are its own, one
//! recorder per process): `/metrics` on `PICKUP_METRICS_ADDR`, parsed with a Prometheus
//! text-format parser.

use crate::common::server::Server;
use crate::common::wait::eventually;
use app::contract::names::route::{ITEMS, RECENT};
use axum::http::StatusCode;
use openmetrics_parser::{MetricsExposition, PrometheusType, PrometheusValue};
use serde_json::json;

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
    // Every metric has its HELP text (from the one list in server/src/metrics.rs).
    for (name, family) in &m.families {
        assert!(!family.help.trim().is_empty(), "{name} has no HELP");
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
