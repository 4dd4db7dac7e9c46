//! The bus is a peer, not an authority: two servers (served in this process as `pickup serve`
//! serves, each with its own metrics and log) on one file store and a real redis-server, with messages published by hand as anything that reaches Redis could
//! publish them; a Redis that stops answering; the reconcile lease; Redis with TLS and a
//! password.

use crate::common::in_process::{flags, Served, Serving};
use crate::common::live_view::{cards, readyz, wait_for_mode, Viewer};
use crate::common::redis::{sealed, Certificates, Redis};
use crate::common::server::SECRET;
use crate::common::stream::token;
use crate::common::wait::eventually;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

mod redis_kinds;

/// Long enough for a busy machine.
const BOUND: Duration = Duration::from_secs(20);

/// Two servers on one store and one bus; `settings` on top.
fn servers(redis: &Redis, settings: &[(&str, &str)]) -> (Served, Served) {
    let mut all = vec![("PICKUP_BUS", redis.url.as_str())];
    all.extend_from_slice(settings);
    let all = flags(&all);
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let a = Served::start(&all);
    let b = Served::start_on(&a.store_url(), &all);
    (a, b)
}

/// A server on its own store with `settings`.
fn server(settings: &[(&str, &str)]) -> Serving {
    let all = flags(settings);
    Serving::new(&all.iter().map(String::as_str).collect::<Vec<_>>())
}

async fn metrics_text(s: &Served) -> String {
    s.metrics()
}

/// The sum of `metric`'s samples whose labels contain `labels` (`why="unsealed"`).
async fn metric(s: &Served, metric: &str, labels: &str) -> f64 {
    let text = metrics_text(s).await;
    text.lines()
        .filter(|l| l.starts_with(&format!("{metric}{{")) && l.contains(labels))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Wait until `metric` with `labels` on `s` is at least `n`.
async fn wait_for_metric(s: &Served, name: &str, labels: &str, n: f64) {
    let what = format!("{}: {name}{{{labels}}} at least {n}", s.url);
    eventually(&what, async || match metric(s, name, labels).await {
        v if v >= n => Ok(()),
        v => Err(format!("it is {v}")),
    })
    .await
}

async fn publish(redis: &Redis, payload: Vec<u8>) {
    let mut conn = redis::Client::open(redis.url.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let _: () = redis::AsyncCommands::publish(&mut conn, "pickup:facts", payload)
        .await
        .unwrap();
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A message as a server would publish it, before it is sealed.
fn envelope(from: &str, seq: u64, body: Value) -> Vec<u8> {
    let mut msg = json!({"from": from, "seq": seq, "at": now_ms()});
    msg.as_object_mut()
        .unwrap()
        .extend(body.as_object().unwrap().clone());
    serde_json::to_vec(&msg).unwrap()
}

fn record_fact(record: &Value) -> Value {
    json!({"kind": "fact", "ws": "acme", "change": "record", "record": record, "registered": false})
}

async fn item(s: &Served, token: &str, id: &str) -> Value {
    let res = s.client().item(token, "acme", id).await;
    assert_eq!(res.status, 200, "GET {id}");
    res.value()
}

/// Hostile messages on the channel: unsealed, sealed with another key, a valid fact replayed,
/// an id dated centuries ahead, another workspace's record, forged dismissals. None changes
/// the store; each is counted as refused; the facts a server's key did seal (a forged title,
/// a forged dismissal) may show on the live pages, but one reconcile later every live page is
/// the REST page again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_facts_change_nothing_in_the_store_and_nothing_after_a_reconcile() {
    let redis = Redis::start();
    let (a, b) = servers(
        &redis,
        &[
            ("PICKUP_LIVE_EVERY", "1h"),
            ("PICKUP_RECONCILE_EVERY", "1s"),
            ("PICKUP_RECONCILE_CEILING", "1s"),
        ],
    );
    wait_for_mode(&a, "facts on the bus").await;
    wait_for_mode(&b, "facts on the bus").await;
    let alice = token("alice", "acme", true, "1h");
    let x = a.client().register(&alice, "acme", "x").await.id;
    let y = a.client().register(&alice, "acme", "y").await.id;
    let mut on_a = Viewer::open(&a, "bob").await;
    let mut on_b = Viewer::open(&b, "bob").await;
    on_a.agrees_with(&a, "before").await;
    on_b.agrees_with(&b, "before").await;

    // A valid fact of A's, heard on the channel as anyone subscribed hears it.
    let mut sub = redis::Client::open(redis.url.as_str())
        .unwrap()
        .get_async_pubsub()
        .await
        .unwrap();
    sub.subscribe("pickup:facts").await.unwrap();
    let z = a.client().register(&alice, "acme", "z").await.id;
    let captured = {
        let mut messages = sub.on_message();
        let deadline = Instant::now() + BOUND;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let msg = tokio::time::timeout(left, futures::StreamExt::next(&mut messages))
                .await
                .expect("A's fact on the channel")
                .unwrap();
            let payload = msg.get_payload_bytes().to_vec();
            if String::from_utf8_lossy(&payload).contains(&z) {
                break payload;
            }
        }
    };
    on_b.agrees_with(&b, "z registered").await;

    let real_x = item(&a, &alice, &x).await;
    let mut finished = real_x.clone();
    finished["status"] = "succeeded".into();
    finished["finished_at"] = "2019-01-01T00:00:00.000Z".into();
    finished["updated_at"] = "2099-01-01T00:00:00.000Z".into();
    let future_id = format!("0000000000000_{}", "y"); // created at the largest time: centuries ahead
    let mut future = item(&a, &alice, &y).await;
    future["id"] = future_id.clone().into();
    let mut other_ws = real_x.clone();
    other_ws["ws"] = "beta".into();
    let dismissal =
        json!({"kind": "fact", "ws": "acme", "change": "dismissed", "user": "bob", "id": x});
    let servers_key = |message: &[u8]| sealed(SECRET.as_bytes(), message);
    let other_key =
        |message: &[u8]| sealed(b"another deployment's secret, 32 bytes or more", message);

    publish(&redis, envelope("mallory", 1, record_fact(&finished))).await;
    publish(
        &redis,
        other_key(&envelope("mallory", 2, record_fact(&finished))),
    )
    .await;
    publish(
        &redis,
        other_key(&envelope("mallory", 3, dismissal.clone())),
    )
    .await;
    publish(&redis, captured).await;
    publish(
        &redis,
        servers_key(&envelope("mallory", 1, record_fact(&future))),
    )
    .await;
    publish(
        &redis,
        servers_key(&envelope("mallory", 2, record_fact(&other_ws))),
    )
    .await;
    let mut old = envelope("mallory", 3, record_fact(&finished));
    let stale = serde_json::from_slice::<Value>(&old).unwrap();
    let mut stale = stale;
    stale["at"] = (now_ms() - 3_600_000).into();
    old = serde_json::to_vec(&stale).unwrap();
    publish(&redis, servers_key(&old)).await;
    for s in [&a, &b] {
        wait_for_metric(s, "pickup_bus_refused_total", "why=\"unsealed\"", 1.0).await;
        wait_for_metric(s, "pickup_bus_refused_total", "why=\"bad_tag\"", 2.0).await;
        wait_for_metric(s, "pickup_bus_refused_total", "why=\"invalid\"", 2.0).await;
        wait_for_metric(s, "pickup_bus_refused_total", "why=\"stale\"", 1.0).await;
    }
    // A hears its own message again as its own; B had heard it already.
    wait_for_metric(&b, "pickup_bus_refused_total", "why=\"replayed\"", 1.0).await;

    // Facts sealed with the servers' key, that a request could have made: a new title with no
    // version, then a dismissal. Each is taken by the copies, and one reconcile later gone.
    let mut retitled = real_x.clone();
    retitled["title"] = "Forged title".into();
    retitled["updated_at"] = chrono::Utc::now()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        .into();
    let retitled = servers_key(&envelope("mallory", 3, record_fact(&retitled)));
    let dismissed = servers_key(&envelope("mallory", 4, dismissal));
    for forged in [retitled, dismissed] {
        taken_then_reconciled(&redis, &a, &b, forged).await;
    }
    on_a.agrees_with(&a, "after the hostile facts").await;
    on_b.agrees_with(&b, "after the hostile facts").await;

    // The store is as the writes left it: every item there, running, with its own title.
    for (id, key) in [(&x, "x"), (&y, "y"), (&z, "z")] {
        for s in [&a, &b] {
            let got = item(s, &alice, id).await;
            assert_eq!(got["status"], "running", "{key} on {}", s.url);
            assert_eq!(got["title"], format!("item {key}"), "{key} on {}", s.url);
        }
    }
    let bob_page = cards(&b.client().page(&on_b.token, "acme", "").await.value());
    assert_eq!(bob_page.len(), 3, "bob's page: {bob_page:?}");
    assert!(!bob_page.iter().any(|c| c.1 == "Forged title"));
    assert!(!format!("{bob_page:?}").contains(&future_id));
}

/// Publish `forged`, a fact the servers' key sealed, wait until both servers have taken it and
/// the lease holder's second period reconcile since (so after its watcher applied it) found
/// the drift and made the other reconcile too; then every live page is the REST page.
async fn taken_then_reconciled(redis: &Redis, a: &Served, b: &Served, forged: Vec<u8>) {
    let heard = |s| metric(s, "pickup_bus_facts_total", "dir=\"heard\"");
    let period = |s| metric(s, "pickup_live_reconciles_total", "why=\"period\"");
    let doubted = |s| metric(s, "pickup_live_reconciles_total", "why=\"doubt\"");
    let (heard_a, heard_b) = (heard(a).await, heard(b).await);
    let (doubt_a, doubt_b) = (doubted(a).await, doubted(b).await);
    publish(redis, forged).await;
    wait_for_metric(a, "pickup_bus_facts_total", "dir=\"heard\"", heard_a + 1.0).await;
    wait_for_metric(b, "pickup_bus_facts_total", "dir=\"heard\"", heard_b + 1.0).await;
    let (period_a, period_b) = (period(a).await, period(b).await);
    let holder_is_a = eventually("a server reconciling by period", async || {
        if period(a).await >= period_a + 2.0 {
            return Ok(true);
        }
        if period(b).await >= period_b + 2.0 {
            return Ok(false);
        }
        Err("neither did".into())
    })
    .await;
    let (other, doubt_before) = if holder_is_a {
        (b, doubt_b)
    } else {
        (a, doubt_a)
    };
    wait_for_metric(
        other,
        "pickup_live_reconciles_total",
        "why=\"doubt\"",
        doubt_before + 1.0,
    )
    .await;
    // A new stream's pages, on both servers.
    for s in [a, b] {
        Viewer::open(s, "bob")
            .await
            .agrees_with(s, "a new stream after one reconcile")
            .await;
    }
}

/// A Redis that stops answering (`SIGSTOP`) closes nothing: the servers notice that their own
/// beats no longer come back, say so on `/readyz`, and poll, so a write through one reaches
/// the other's viewer; when Redis goes on, facts drive the watchers again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_that_stops_answering_is_noticed_and_polled_around() {
    let redis = Redis::start();
    let (a, b) = servers(&redis, &[("PICKUP_LIVE_EVERY", "200ms")]);
    wait_for_mode(&a, "facts on the bus").await;
    wait_for_mode(&b, "facts on the bus").await;
    let alice = token("alice", "acme", true, "1h");
    let mut on_b = Viewer::open(&b, "bob").await;

    redis.pause();
    let paused = Instant::now();
    wait_for_mode(&b, "the bus is down").await;
    wait_for_mode(&a, "the bus is down").await;
    println!(
        "SIGSTOP: both servers polled {:.1} s after Redis stopped answering",
        paused.elapsed().as_secs_f64()
    );
    let during = a.client().register(&alice, "acme", "during").await.id;
    on_b.until("registered while Redis hung", |cards| {
        cards.iter().any(|c| c.0 == during)
    })
    .await;

    redis.resume();
    let resumed = Instant::now();
    wait_for_mode(&b, "facts on the bus").await;
    wait_for_mode(&a, "facts on the bus").await;
    println!(
        "SIGCONT: both servers on facts again {:.1} s after",
        resumed.elapsed().as_secs_f64()
    );
    let after = a.client().register(&alice, "acme", "after").await.id;
    on_b.until("registered after Redis went on", |cards| {
        cards.iter().any(|c| c.0 == after)
    })
    .await;
    on_b.agrees_with(&b, "after").await;
}

/// A watched workspace nobody writes is reconciled less and less often: each quiet period
/// doubles the next, from `PICKUP_RECONCILE_EVERY` (100 ms here) up to the ceiling (800 ms).
/// With a fixed period the last three gaps between its period reconciles would
/// be about 300 ms in all; doubling makes them at least 1.8 s (by the test's clock, as a lower
/// bound only: a slow machine makes gaps longer, never shorter). A fact brings the base back
/// (`cadence::tests`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_workspace_is_reconciled_less_and_less_often() {
    let redis = Redis::start();
    let (a, b) = servers(
        &redis,
        &[
            ("PICKUP_LIVE_EVERY", "1h"),
            ("PICKUP_RECONCILE_EVERY", "100ms"),
            ("PICKUP_RECONCILE_CEILING", "800ms"),
        ],
    );
    wait_for_mode(&a, "facts on the bus").await;
    wait_for_mode(&b, "facts on the bus").await;
    // One watcher, on A: B hears the bus but watches nothing, so A holds the lease throughout
    // (with two watchers, a holder late to renew a 200 ms lease on a busy machine lost it, and
    // both reconciled: gaps that say nothing of the period).
    let _on_a = Viewer::open(&a, "bob").await;
    drop(b);
    let reconciles = async || metric(&a, "pickup_live_reconciles_total", "why=\"period\"").await;
    // When each period reconcile was seen, seven of them.
    let mut seen: Vec<Instant> = Vec::new();
    let mut last = reconciles().await;
    eventually("seven period reconciles", async || {
        let now = reconciles().await;
        if now > last {
            seen.push(Instant::now());
            last = now;
        }
        match seen.len() {
            7.. => Ok(()),
            n => Err(format!("{n} seen")),
        }
    })
    .await;
    let gaps: Vec<u128> = seen.windows(2).map(|w| (w[1] - w[0]).as_millis()).collect();
    println!("cadence: gaps between period reconciles {gaps:?} ms (base 100, ceiling 800)");
    let last_three: u128 = gaps[gaps.len() - 3..].iter().sum();
    assert!(
        last_three >= 1800,
        "the last three gaps were {last_three} ms in all ({gaps:?}): the period did not grow"
    );
}

/// One server holds a watched workspace's reconcile lease and renews it before it lapses, so
/// the store is reconciled once per period, not every other period.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lease_holder_reconciles_once_per_period() {
    const PERIOD_MS: u64 = 250;
    let redis = Redis::start();
    let (a, b) = servers(
        &redis,
        &[
            ("PICKUP_LIVE_EVERY", "1h"),
            ("PICKUP_RECONCILE_EVERY", "250ms"),
            // A fixed period: this counts periods, and a quiet workspace's would grow.
            ("PICKUP_RECONCILE_CEILING", "250ms"),
        ],
    );
    wait_for_mode(&a, "facts on the bus").await;
    wait_for_mode(&b, "facts on the bus").await;
    let _on_a = Viewer::open(&a, "bob").await;
    let _on_b = Viewer::open(&b, "bob").await;
    let count = |a: f64, b: f64| a + b;
    let reconciles = |s| metric(s, "pickup_live_reconciles_total", "why=\"period\"");
    // Settle first: both watchers are running, each server has heard the other (until then
    // neither takes the other's lease as a server's), and one holds the lease.
    wait_for_metric(&a, "pickup_live_reconciles_total", "why=\"start\"", 1.0).await;
    wait_for_metric(&b, "pickup_live_reconciles_total", "why=\"start\"", 1.0).await;
    for s in [&a, &b] {
        let deadline = Instant::now() + BOUND;
        while !metrics_text(s)
            .await
            .lines()
            .any(|l| l == "pickup_bus_peers 1")
        {
            assert!(
                Instant::now() < deadline,
                "{}: never heard the other server",
                s.url
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let started = Instant::now();
    let before = count(reconciles(&a).await, reconciles(&b).await);
    // 32 periods, by the test's clock (the reconciles are counted, not timed).
    tokio::time::sleep(Duration::from_millis(32 * PERIOD_MS)).await;
    let after = count(reconciles(&a).await, reconciles(&b).await);
    let periods = started.elapsed().as_millis() as f64 / PERIOD_MS as f64;
    let done = after - before;
    println!(
        "lease: {done} period reconciles in {periods:.1} periods of {PERIOD_MS} ms, two servers"
    );
    assert!(
        done <= periods + 2.0,
        "{done} period reconciles in {periods:.1} periods: more than one server reconciled"
    );
    // A lease that lapsed between periods reconciles every other period (half as often); a
    // busy machine's late ticks make a few fewer than one a period, never half.
    assert!(
        done >= periods * 0.6,
        "{done} period reconciles in {periods:.1} periods: the lease lapsed between periods"
    );

    // Anything that can write to Redis sets the lease for good, in a name no server has: it
    // does not stop the period reconcile.
    let mut conn = redis::Client::open(redis.url.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let _: () = redis::AsyncCommands::set(&mut conn, "pickup:reconcile:acme", "mallory")
        .await
        .unwrap();
    // Period reconciles go on: eight more (a stopped reconcile makes none), within the bound.
    let before = count(reconciles(&a).await, reconciles(&b).await);
    eventually("eight more period reconciles", async || {
        let now = count(reconciles(&a).await, reconciles(&b).await);
        match now - before {
            n if n >= 8.0 => Ok(()),
            n => Err(format!("{n} so far")),
        }
    })
    .await;
}
