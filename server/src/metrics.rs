//! Operators' numbers: Prometheus metrics at `/metrics` on `PICKUP_METRICS_ADDR`, a listener
//! of its own so that it is never exposed with the API. The numbers are recorded where things
//! happen, through the `metrics` facade; the exporter renders them. Without a recorder (no
//! `PICKUP_METRICS_ADDR`) recording is a no-op.
//!
//! [`ALL`] is the one list of every metric Pickup records: its name, kind and meaning.
//! Code records through the constants below, never a literal name, so nothing is recorded that
//! the list (and `/metrics`'s `# HELP` lines, and the README's table) does not describe.

use anyhow::Context;
use axum::extract::{MatchedPath, Request};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};

/// The latency histograms' buckets, in seconds: a local store answers in well under a
/// millisecond, a cloud in tens of milliseconds, a stalled one in seconds.
const SECONDS_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// HTTP requests answered, by route template (never the raw path), method and status.
pub(crate) const HTTP_REQUESTS: &str = "pickup_http_requests_total";
/// Time to the answer's head, by route template and method.
pub(crate) const HTTP_REQUEST_SECONDS: &str = "pickup_http_request_seconds";
/// Requests to the object store, by kind (`op`).
pub(crate) const STORE_REQUESTS: &str = "pickup_store_requests_total";
/// Store request latency, by kind (`op`).
pub(crate) const STORE_REQUEST_SECONDS: &str = "pickup_store_request_seconds";
/// Keys the store's listings returned.
pub(crate) const STORE_KEYS_LISTED: &str = "pickup_store_keys_listed_total";
/// Read-cache lookups, by what was looked up (`cache`) and whether the store was asked.
pub(crate) const CACHE_LOOKUPS: &str = "pickup_cache_lookups_total";
/// Workspaces this server watches for live streams.
pub(crate) const LIVE_WATCHERS: &str = "pickup_live_watchers";
/// Live streams open on this server.
pub(crate) const LIVE_SUBSCRIBERS: &str = "pickup_live_subscribers";
/// Keys deleted, by who found them dead (`by`), why (`reason`) and kind of key.
/// Live watchers' reconciles (a listing of the workspace's keys), by why they ran.
pub(crate) const LIVE_RECONCILES: &str = "pickup_live_reconciles_total";
/// 1 while live watchers poll the store (no bus, or the bus is down), 0 while facts drive them.
pub(crate) const LIVE_POLLING: &str = "pickup_live_polling";
/// Facts on the bus: published by this server, heard from others, or refused as unreadable.
pub(crate) const BUS_FACTS: &str = "pickup_bus_facts_total";
pub(crate) const BUS_REFUSED: &str = "pickup_bus_refused_total";
pub(crate) const BUS_PEERS: &str = "pickup_bus_peers";
pub(crate) const DELETIONS: &str = "pickup_deletions_total";
/// Deletes that failed (retried by a later read or sweep), by who found the key dead.
pub(crate) const DELETION_FAILURES: &str = "pickup_deletion_failures_total";
/// Deletes by age held back because this server's clock disagrees with the store's.
pub(crate) const DELETIONS_HELD: &str = "pickup_deletions_held_total";
/// Registrations (`POST …/items`), by outcome: `created` or the error code of the refusal.
pub(crate) const REGISTRATIONS: &str = "pickup_registrations_total";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// One metric as operators see it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Metric {
    pub name: &'static str,
    pub kind: Kind,
    pub help: &'static str,
}

/// Every metric Pickup records.
pub(crate) const ALL: &[Metric] = &[
    Metric {
        name: HTTP_REQUESTS,
        kind: Kind::Counter,
        help: "HTTP requests answered, by route template (site files are route=\"site\"), method and status",
    },
    Metric {
        name: HTTP_REQUEST_SECONDS,
        kind: Kind::Histogram,
        help: "Seconds until the answer's head was ready (a live stream's first byte), by route template and method",
    },
    Metric {
        name: STORE_REQUESTS,
        kind: Kind::Counter,
        help: "Requests to the object store, by kind: list (one per page), get, head, put, delete",
    },
    Metric {
        name: STORE_REQUEST_SECONDS,
        kind: Kind::Histogram,
        help: "Seconds each object store request took, by kind",
    },
    Metric {
        name: STORE_KEYS_LISTED,
        kind: Kind::Counter,
        help: "Keys the object store's listings returned",
    },
    Metric {
        name: CACHE_LOOKUPS,
        kind: Kind::Counter,
        help: "Read-cache lookups: cache=list|record|page, result=hit (served without a store request of its own, shared loads included) or miss",
    },
    Metric {
        name: LIVE_WATCHERS,
        kind: Kind::Gauge,
        help: "Workspaces this server reads again for live streams",
    },
    Metric {
        name: LIVE_SUBSCRIBERS,
        kind: Kind::Gauge,
        help: "Live streams open on this server",
    },
    Metric {
        name: DELETIONS,
        kind: Kind::Counter,
        help: "Keys deleted: by=read (found dead by a read) or janitor (a sweep), the reason, the kind of key (a marker's record counts under kind=record)",
    },
    Metric {
        name: DELETION_FAILURES,
        kind: Kind::Counter,
        help: "Deletes that failed; a later read or sweep retries them",
    },
    Metric {
        name: DELETIONS_HELD,
        kind: Kind::Counter,
        help: "Deletes by age not made because this server's clock disagrees with the store's by more than PICKUP_MAX_SKEW",
    },
    Metric {
        name: LIVE_RECONCILES,
        kind: Kind::Counter,
        help: "Live watchers' reconciles with the store, by why: start, poll (no bus or the bus down), period (this server held the workspace's lease), doubt (a gap or reconnect on the bus, a peer's doubt, an error), fact (a fact only the store could place: a gone id registered again)",
    },
    Metric {
        name: LIVE_POLLING,
        kind: Kind::Gauge,
        help: "1 while live watchers poll the store every PICKUP_LIVE_EVERY (no PICKUP_BUS, or the bus is down); 0 while facts on the bus drive them",
    },
    Metric {
        name: BUS_FACTS,
        kind: Kind::Counter,
        help: "Facts on the bus: dir=published, heard (from another server), refused (see pickup_bus_refused_total), gap (a peer's facts were missed)",
    },
    Metric {
        name: BUS_PEERS,
        kind: Kind::Gauge,
        help: "Other servers heard on the bus lately (sealed with the deployment's key): a server with another key, or one that cannot reach Redis, is missing here",
    },
    Metric {
        name: BUS_REFUSED,
        kind: Kind::Counter,
        help: "Messages on the bus refused, changing nothing, by why: unsealed or bad_tag (not sealed with the deployment's bus key), malformed, stale (dated outside the clock skew: a replay), replayed (a sequence number already heard), invalid (a fact a request saying the same would be refused for)",
    },
    Metric {
        name: REGISTRATIONS,
        kind: Kind::Counter,
        help: "Registrations: outcome=created, or the error code they were refused with (invalid_body, conflict, store_unavailable, …)",
    },
];

/// Counts one registration: created, or refused with its error's code.
pub(crate) fn registration(result: Result<(), app::contract::ErrorCode>) {
    let outcome = match result {
        Ok(()) => "created",
        Err(code) => code.as_str(),
    };
    metrics::counter!(REGISTRATIONS, "outcome" => outcome).increment(1);
}

/// Give every metric its `# HELP` text (after the recorder is installed).
fn describe() {
    for m in ALL {
        match m.kind {
            Kind::Counter => metrics::describe_counter!(m.name, m.help),
            Kind::Gauge => metrics::describe_gauge!(m.name, m.help),
            Kind::Histogram => {
                metrics::describe_histogram!(m.name, metrics::Unit::Seconds, m.help)
            }
        }
    }
}

/// Middleware: counts each answer by the route it matched (the template, `/api/v1/workspaces/{ws}/items`,
/// so that names and ids never become labels), its method and status, and times it. Requests no
/// route matched are the site's files: `route="site"`. Methods outside the standard set are
/// counted as `OTHER`, so a client cannot make new series at will.
pub(crate) async fn count_request(req: Request, next: Next) -> Response {
    let route = match req.extensions().get::<MatchedPath>() {
        Some(path) => path.as_str().to_owned(),
        None => "site".to_owned(),
    };
    let method = match *req.method() {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::PATCH => "PATCH",
        _ => "OTHER",
    };
    let started = std::time::Instant::now();
    let res = next.run(req).await;
    metrics::histogram!(HTTP_REQUEST_SECONDS, "route" => route.clone(), "method" => method)
        .record(started.elapsed().as_secs_f64());
    let status = res.status().as_u16().to_string();
    metrics::counter!(HTTP_REQUESTS, "route" => route, "method" => method, "status" => status)
        .increment(1);
    res
}

/// Install the recorder and serve `/metrics` on `addr` until the process ends.
pub(crate) async fn listen(addr: &str) -> anyhow::Result<()> {
    // Without buckets the exporter renders summaries, which cannot be aggregated across servers.
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS_BUCKETS)
        .context("setting the latency buckets")?
        .install_recorder()
        .context("installing the metrics recorder")?;
    describe();
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("PICKUP_METRICS_ADDR {addr}: cannot listen"))?;
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || std::future::ready(handle.render())),
    );
    println!("metrics on http://{}/metrics", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_prometheus_conventions_and_are_listed_once() {
        let mut seen = std::collections::HashSet::new();
        for m in ALL {
            assert!(m.name.starts_with("pickup_"), "{}", m.name);
            assert!(seen.insert(m.name), "{} listed twice", m.name);
            match m.kind {
                Kind::Counter => assert!(m.name.ends_with("_total"), "{}", m.name),
                Kind::Histogram => assert!(m.name.ends_with("_seconds"), "{}", m.name),
                Kind::Gauge => assert!(!m.name.ends_with("_total"), "{}", m.name),
            }
        }
    }
}
