//! Facts between servers on a real Redis: `pickup serve` processes with `PICKUP_BUS`, one file
//! store, live streams read as a browser reads them. Periods are an hour, so nothing but a
//! fact (or a reconcile the bus itself asks for) can carry a change from one server to
//! another's viewer; each viewer's page must come to equal the REST page.

use crate::common::redis::Redis;
use crate::common::server::{Server, SECRET};
use crate::common::stream::{client, register, token, Events};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const BOUND: Duration = Duration::from_secs(15);

fn servers(redis: &Redis, b_env: &[(&str, &str)]) -> (Server, Server) {
    let quiet = [
        ("PICKUP_BUS", redis.url.as_str()),
        ("PICKUP_LIVE_EVERY", "1h"),
        ("PICKUP_RECONCILE_EVERY", "1h"),
    ];
    let a = Server::start(&quiet);
    let store = format!("file://{}", a.dir.path().display());
    let mut env = quiet.to_vec();
    env.push(("PICKUP_STORE", store.as_str()));
    env.extend_from_slice(b_env);
    let b = Server::start_on("b", &store, SECRET, &env);
    (a, b)
}

/// Wait until `/readyz` says the live pages are driven as `mode` says.
async fn wait_for_mode(s: &Server, mode: &str) {
    let deadline = Instant::now() + BOUND;
    loop {
        let body = client()
            .get(format!("{}/readyz", s.url))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        if body.contains(mode) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{}: /readyz says {body:?}, not {mode:?}",
            s.name
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn cards(page: &Value) -> Vec<(String, String)> {
    page["cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().into(),
                c["status"].as_str().unwrap().into(),
            )
        })
        .collect()
}

/// A viewer's stream and the last page it sent.
struct Viewer {
    events: Events,
    token: String,
    latest: Vec<(String, String)>,
}

impl Viewer {
    async fn open(s: &Server, sub: &str) -> Viewer {
        let token = token(sub, "acme", false, "1h");
        let mut events = Events::open(s, "acme", &token).await;
        let latest = events.page().await;
        Viewer {
            events,
            token,
            latest,
        }
    }

    /// Read the stream until its page is the REST page of `s` for the same viewer.
    async fn agrees_with(&mut self, s: &Server, what: &str) {
        let deadline = Instant::now() + BOUND;
        loop {
            let rest = cards(&s.recent_page(&self.token, "acme", "").await);
            if self.latest == rest {
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.events.page()).await {
                Ok(page) => self.latest = page,
                Err(_) => panic!(
                    "{what}: the live page {:?} never became the REST page {rest:?}",
                    self.latest
                ),
            }
        }
    }
}

async fn put(s: &Server, token: &str, id: &str, status: &str) {
    let res = client()
        .put(format!("{}/api/v1/workspaces/acme/items/{id}", s.url))
        .bearer_auth(token)
        .json(&json!({"title": "changed", "status": status}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

async fn call(s: &Server, method: reqwest::Method, path: &str, token: &str) {
    let res = client()
        .request(method, format!("{}/api/v1/workspaces/acme/{path}", s.url))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{path}: {}", res.status());
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

    let x = register(&a, &writer, "x").await;
    on_b.agrees_with(&b, "registered through A").await;
    let y = register(&b, &writer, "y").await;
    on_a.agrees_with(&a, "registered through B").await;
    put(&a, &writer, &y, "succeeded").await;
    on_b.agrees_with(&b, "updated through A").await;
    call(
        &b,
        reqwest::Method::POST,
        &format!("items/{x}/dismiss"),
        &on_a.token,
    )
    .await;
    on_a.agrees_with(&a, "dismissed through B").await;
    call(&a, reqwest::Method::DELETE, &format!("items/{y}"), &writer).await;
    on_b.agrees_with(&b, "removed through A").await;
    on_a.agrees_with(&a, "removed through A, on A").await;
}

/// The bus killed mid-run: the servers say so and poll; writes still reach both viewers;
/// when it is back, facts drive them again, and nothing was lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_bus_down_the_watchers_poll_and_nothing_is_lost() {
    let mut redis = Redis::start();
    // Polling (while the bus is down) every 200 ms.
    let quick = [("PICKUP_LIVE_EVERY", "200ms")];
    let (a, b) = servers(&redis, &quick);
    wait_for_mode(&b, "facts on the bus").await;
    let writer = token("ada", "acme", true, "1h");
    let mut on_b = Viewer::open(&b, "bob").await;
    register(&a, &writer, "before").await;
    on_b.agrees_with(&b, "before the bus went down").await;

    redis.kill();
    wait_for_mode(&b, "the bus is down").await;
    let during = register(&a, &writer, "during").await;
    on_b.agrees_with(&b, "while the bus was down").await;

    redis.restart();
    wait_for_mode(&b, "facts on the bus").await;
    wait_for_mode(&a, "facts on the bus").await;
    put(&a, &writer, &during, "failed").await;
    register(&a, &writer, "after").await;
    on_b.agrees_with(&b, "after the bus came back").await;
}

/// Pub/sub may lose a fact: every second fact B hears is dropped. The sequence numbers (on the
/// next fact, or on A's heartbeat) tell B it missed one, and it reconciles.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_fact_is_found_by_its_gap_and_reconciled() {
    let redis = Redis::start();
    let (a, b) = servers(&redis, &[("PICKUP_TEST_DROP_FACTS", "2")]);
    wait_for_mode(&a, "facts on the bus").await;
    wait_for_mode(&b, "facts on the bus").await;
    let writer = token("ada", "acme", true, "1h");
    let mut on_b = Viewer::open(&b, "bob").await;
    let mut ids = Vec::new();
    for k in ["p", "q", "r"] {
        ids.push(register(&a, &writer, k).await);
    }
    on_b.agrees_with(&b, "three registrations, one of their facts lost")
        .await;
    // The last fact alone lost: only A's heartbeat can tell.
    put(&a, &writer, &ids[0], "succeeded").await;
    put(&a, &writer, &ids[1], "succeeded").await;
    on_b.agrees_with(&b, "the last update's fact lost").await;
}
