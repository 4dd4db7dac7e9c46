//! Facts between servers on a real Redis: two servers (served in this process as `pickup serve`
//! serves) with `PICKUP_BUS`, one file store, live streams read as a browser reads them. Periods are an hour, so nothing but a
//! fact (or a reconcile the bus itself asks for) can carry a change from one server to
//! another's viewer; each viewer's page must come to equal the REST page.

use crate::common::client::path;
use crate::common::in_process::Served;
use crate::common::live_view::{wait_for_mode, Viewer};
use crate::common::redis::Redis;
use crate::common::stream::{token, Events};
use app::contract::LiveEvent;
use serde_json::json;

fn servers(redis: &Redis, b_flags: &[&str]) -> (Served, Served) {
    let quiet = [
        "--bus",
        redis.url.as_str(),
        "--live-every",
        "1h",
        "--reconcile-every",
        "1h",
    ];
    let a = Served::start(&quiet);
    // B's own flags in place of the quiet ones they name.
    let mut flags: Vec<&str> = quiet
        .chunks(2)
        .filter(|pair| !b_flags.contains(&pair[0]))
        .flatten()
        .copied()
        .collect();
    flags.extend_from_slice(b_flags);
    let b = Served::start_on(&a.store_url(), &flags);
    (a, b)
}

async fn put(s: &Served, token: &str, id: &str, status: &str) {
    let body = json!({"title": "changed", "status": status});
    let res = s.client().update(token, "acme", id, &body).await;
    assert_eq!(res.status, 200);
}

async fn call(s: &Served, method: axum::http::Method, path: &str, token: &str) {
    let path = format!("{}/{path}", path::items("acme").trim_end_matches("/items"));
    let res = s.client().request(method, &path).bearer(token).send().await;
    assert!(res.status.is_success(), "{path}: {}", res.status);
}

/// Items registered, updated, dismissed and removed through either server: both servers'
/// viewers follow, with no period to fall back on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_write_reaches_the_viewers_of_both_servers_as_a_fact() {
    let redis = Redis::start();
    let (a, b) = servers(&redis, &[]);
    wait_for_mode(&a, "facts on the bus").await;
    wait_for_mode(&b, "facts on the bus").await;
    let writer = token("ada", "acme", true, "1h");
    let mut on_a = Viewer::open(&a, "bob").await;
    let mut on_b = Viewer::open(&b, "bob").await;

    let x = a.client().register(&writer, "acme", "x").await.id;
    on_b.agrees_with(&b, "registered through A").await;
    let y = b.client().register(&writer, "acme", "y").await.id;
    on_a.agrees_with(&a, "registered through B").await;
    put(&a, &writer, &y, "succeeded").await;
    on_b.agrees_with(&b, "updated through A").await;
    call(
        &b,
        axum::http::Method::POST,
        &format!("items/{x}/dismiss"),
        &on_a.token,
    )
    .await;
    on_a.agrees_with(&a, "dismissed through B").await;
    call(
        &a,
        axum::http::Method::DELETE,
        &format!("items/{y}"),
        &writer,
    )
    .await;
    on_b.agrees_with(&b, "removed through A").await;
    on_a.agrees_with(&a, "removed through A, on A").await;
}

/// The bus killed mid-run: the servers say so and poll; writes still reach both viewers;
/// when it is back, facts drive them again, and nothing was lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_bus_down_the_watchers_poll_and_nothing_is_lost() {
    let mut redis = Redis::start();
    // Polling (while the bus is down) every 200 ms.
    let quick = ["--live-every", "200ms"];
    let (a, b) = servers(&redis, &quick);
    wait_for_mode(&b, "facts on the bus").await;
    let writer = token("ada", "acme", true, "1h");
    let mut on_b = Viewer::open(&b, "bob").await;
    a.client().register(&writer, "acme", "before").await;
    on_b.agrees_with(&b, "before the bus went down").await;

    redis.kill();
    wait_for_mode(&b, "the bus is down").await;
    let during = a.client().register(&writer, "acme", "during").await.id;
    on_b.agrees_with(&b, "while the bus was down").await;

    redis.restart();
    wait_for_mode(&b, "facts on the bus").await;
    wait_for_mode(&a, "facts on the bus").await;
    put(&a, &writer, &during, "failed").await;
    a.client().register(&writer, "acme", "after").await;
    on_b.agrees_with(&b, "after the bus came back").await;
}

/// Pub/sub may lose a fact: every second fact B hears is dropped. The sequence numbers (on the
/// next fact, or on A's heartbeat) tell B it missed one, and it reconciles.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_fact_is_found_by_its_gap_and_reconciled() {
    let redis = Redis::start();
    let (a, b) = servers(&redis, &["--test-drop-facts", "2"]);
    wait_for_mode(&a, "facts on the bus").await;
    wait_for_mode(&b, "facts on the bus").await;
    let writer = token("ada", "acme", true, "1h");
    let mut on_b = Viewer::open(&b, "bob").await;
    let mut ids = Vec::new();
    for k in ["p", "q", "r"] {
        ids.push(a.client().register(&writer, "acme", k).await.id);
    }
    on_b.agrees_with(&b, "three registrations, one of their facts lost")
        .await;
    // The last fact alone lost: only A's heartbeat can tell.
    put(&a, &writer, &ids[0], "succeeded").await;
    put(&a, &writer, &ids[1], "succeeded").await;
    on_b.agrees_with(&b, "the last update's fact lost").await;
}

/// What changes by time alone reaches a live page while facts drive it, with no write: a
/// running item whose heartbeat goes stale is shown stalled. (The watcher computes its pages
/// again when a verdict is due to turn, not on every tick; its belt is a minute, so a missed
/// turn fails here.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_heartbeat_going_stale_reaches_the_live_page_with_no_write() {
    let redis = Redis::start();
    let s = Served::start(&[
        "--bus",
        redis.url.as_str(),
        "--reconcile-every",
        "1h",
        "--stale-after",
        "2s",
    ]);
    wait_for_mode(&s, "facts on the bus").await;
    let writer = token("ada", "acme", true, "1h");
    let id = s.client().register(&writer, "acme", "long-run").await.id;
    let mut events = Events::open(&s.url, "acme", &token("bob", "acme", false, "1h")).await;
    let stalled = |page: &serde_json::Value| {
        page["cards"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == id.as_str() && c["stalled"] == true)
    };
    let mut pages = Vec::new();
    let found = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while let Some((name, page)) = events.next().await {
            if name == LiveEvent::Page.as_str() && stalled(&page) {
                return;
            }
            pages.push(page);
        }
        panic!("the stream ended");
    })
    .await;
    assert!(found.is_ok(), "never shown stalled: {pages:?}");
}

/// A fact lost at a join (issue 47.4): B drops every fact it hears, and A registers as soon as
/// B listens, so A's fact is the first B hears of A. However soon after B subscribed it came,
/// its loss is found (B's join waits until it has heard its peers, and their next beats show
/// the gap), and the item reaches B's viewer with no period to fall back on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fact_lost_as_a_server_joins_still_reaches_its_viewers() {
    let redis = Redis::start();
    let (a, b) = servers(&redis, &["--test-drop-facts", "1"]);
    // `Served::start_on` returns once B listens, and B listens once it is on the bus.
    let writer = token("ada", "acme", true, "1h");
    let mut on_b = Viewer::open(&b, "bob").await;
    let id = a.client().register(&writer, "acme", "at-the-join").await.id;
    on_b.until("a registration whose fact B lost as it joined", |cards| {
        cards.iter().any(|c| c.0 == id)
    })
    .await;
    on_b.agrees_with(&b, "after the lost fact").await;
}
