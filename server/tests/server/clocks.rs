//! Issue 25.3 and 25.4: two servers on one store (served in this process as `pickup serve`
//! serves), one of them telling the time by a clock that is off ([`OffsetClock`]), which a test
//! can step mid-run the way NTP steps a clock. The monotonic clock, by which a server measures
//! the store's, is left alone, as NTP leaves it.

use crate::common;

use crate::common::client::token;
use crate::common::in_process::{OffsetClock, Served, Serving};
use app::contract::RecentPage;
use axum::http::StatusCode;
use serde_json::{json, Value};

/// A server on `store` whose clock is `clock`.
fn faked(store: &str, clock: std::sync::Arc<OffsetClock>) -> Served {
    quiet(store).clock(clock).start()
}

fn plain(store: &str) -> Served {
    quiet(store).start()
}

/// Every read to the store, no janitor: what each server does, the test sees.
fn quiet(store: &str) -> Serving {
    Serving::new(&["--read-cache", "0s"]).store(store)
}

async fn register(s: &Served, token: &str, key: &str) -> String {
    let body = json!({"key": key, "title": format!("{key} on {}", s.url), "status": "running"});
    let res = s.client().registered(token, "acme", &body).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}: {}", s.url, res.text());
    res.json::<app::contract::ItemRecord>().id
}

async fn update(s: &Served, token: &str, id: &str, status: &str) -> (StatusCode, Value) {
    let body = json!({"title": format!("{id} {status}"), "status": status, "progress": 0.5});
    let res = s.client().update(token, "acme", id, &body).await;
    (res.status, res.value())
}

async fn readyz(s: &Served) -> (StatusCode, String) {
    let res = s.client().get("/readyz").send().await;
    (res.status, res.text())
}

fn shown(page: &RecentPage) -> Vec<(String, String)> {
    page.cards
        .iter()
        .map(|c| (c.id.clone(), c.status.as_str().to_string()))
        .collect()
}

/// Run 1 via A fails; then run 2 of the same key via B, whose clock is 100 s behind (within
/// the 2 min skew), succeeds. Every page shows run 2's success, and run 2's record stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_later_run_wins_whatever_the_servers_clocks() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("file://{}", dir.path().join("store").display());
    let a = plain(&store);
    let b = faked(&store, OffsetClock::new(-100_000));
    let token = token("alice", "acme", true);

    let run1 = register(&a, &token, "nightly").await;
    let (status, failed) = update(&a, &token, &run1, "failed").await;
    assert_eq!(status, StatusCode::OK);
    // B dates its writes by the store's clock, which it knows only to within its measurement
    // (1.5 s plus half the probe's round trip, more on a loaded machine): run 2 comes after
    // run 1 by more than that, as a re-run does, or "later" is within what no clock can tell.
    let finished = chrono::DateTime::parse_from_rfc3339(failed["finished_at"].as_str().unwrap())
        .unwrap()
        .timestamp_millis();
    while chrono::Utc::now().timestamp_millis() < finished + 3_000 {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let run2 = register(&b, &token, "nightly").await;
    assert_eq!(
        update(&b, &token, &run2, "succeeded").await.0,
        StatusCode::OK
    );

    for s in [&a, &b, &a] {
        let page = s.client().recent(&token, "acme", "cap=8").await;
        assert_eq!(
            shown(&page),
            vec![(run2.clone(), "succeeded".to_string())],
            "{}: run 1 {run1}, run 2 {run2}",
            s.url
        );
    }
    // The reads' deletes are done after the answers: run 2 must still be there, run 1 may go.
    let (status, body) = update(&a, &token, &run2, "succeeded").await;
    assert_eq!(status, StatusCode::OK, "run 2's record is kept: {body}");
}

/// A server whose clock NTP steps back 600 s (beyond the 2 min skew) mid-run: its producer's
/// heartbeats are still accepted, its new ids are dated by the store's clock (so no other
/// server reads them as superseded or expired), and it says so in `/readyz`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clock_stepped_back_beyond_the_skew_stops_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("file://{}", dir.path().join("store").display());
    let clock = OffsetClock::new(0);
    let b = faked(&store, clock.clone());
    let a = plain(&store);
    let token = token("alice", "acme", true);

    let running = register(&b, &token, "deploy").await;
    assert_eq!(
        update(&b, &token, &running, "running").await.0,
        StatusCode::OK
    );
    clock.set(-600_000);
    let (status, body) = update(&b, &token, &running, "running").await;
    assert_eq!(status, StatusCode::OK, "heartbeat after the step: {body}");

    // A new run via the stepped server, then one via A: A's is the newer run.
    let after_step = register(&b, &token, "migrate").await;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let created_ms = 9_999_999_999_999 - after_step[..13].parse::<u64>().unwrap();
    assert!(
        created_ms.abs_diff(now_ms) < 10_000,
        "dated by the store's clock, not 600 s back: {created_ms} vs {now_ms}"
    );
    let newer = register(&a, &token, "migrate").await;
    assert!(newer < after_step, "A's later run has the newer id");

    for s in [&a, &b] {
        let page = s.client().recent(&token, "acme", "cap=8").await;
        let ids: Vec<String> = shown(&page).into_iter().map(|(id, _)| id).collect();
        assert!(ids.contains(&running), "{}: {ids:?}", s.url);
        assert!(ids.contains(&newer), "{}: {ids:?}", s.url);
    }
    // B's earlier run of "deploy" is not deleted by anyone's reads.
    assert_eq!(
        update(&a, &token, &running, "running").await.0,
        StatusCode::OK
    );

    let (status, text) = readyz(&b).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(
        text.contains("600 s behind the store's") || text.contains("599 s behind the store's"),
        "/readyz: {text}"
    );
    let (_, text) = readyz(&a).await;
    assert!(
        text.starts_with("ready") && !text.contains("behind"),
        "/readyz of the server whose clock is right: {text}"
    );
}

/// A slow store is not a clock that is off. The clock probe's write is stamped here 4 s after
/// it was sent (a loaded Azurite took that long in CI): only that write's round trip brackets
/// the store's time, so this server keeps dating its writes itself. (Measured over the write,
/// the read-back and the delete, the store looked 2 s ahead, ids were dated by it, and a re-run
/// on another server could get an id older than the run it followed.)
#[tokio::test]
async fn a_slow_store_is_not_a_clock_that_is_off() {
    use common::fault::{FaultStore, Op};
    use pickup::index::{Clock, Index, Limits, Producer, SystemClock, UserId, Workspace};
    use std::sync::Arc;
    let faults = Arc::new(FaultStore::new(Arc::new(
        object_store::memory::InMemory::new(),
    )));
    let index = Index::open("memory://", Limits::default(), 8, Arc::new(SystemClock))
        .unwrap()
        .through(|_| faults.clone())
        .with_clock_check();
    let door = faults.hold(Op::Put, "clock/");
    let measuring = {
        let index = index.clone();
        tokio::spawn(async move { index.clock_status().await })
    };
    door.reached.notified().await;
    // The latency itself, in real time: the memory store stamps a write when it takes it.
    tokio::time::sleep(std::time::Duration::from_secs(4)).await;
    door.release();
    measuring.await.unwrap();
    let ws = Workspace::parse("acme").unwrap();
    let ada = Producer {
        user: UserId::parse("ada").unwrap(),
        name: "Ada".into(),
    };
    let item = app::contract::NewItem {
        key: "k".into(),
        title: "t".into(),
        ..Default::default()
    };
    let record = index.register(&ws, &item, &ada).await.unwrap();
    let created = pickup::index::ItemId::parse(&record.id)
        .unwrap()
        .created_ms();
    let now = SystemClock.now_ms();
    assert!(
        now.abs_diff(created) < 500,
        "dated by this server's clock, not the slow store's: {} ms apart",
        now as i64 - created as i64
    );
}
