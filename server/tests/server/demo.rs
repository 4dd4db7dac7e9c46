//! `pickup demo` is alive: the demo served in this process as `pickup demo` serves it, with
//! short periods, read through the REST API as the widget's viewer reads it. Its workers' progress moves, a run finishes and the next one
//! starts, and nothing but the one item meant to stall is ever shown stalled.

use crate::common::client::token;
use crate::common::in_process::Serving;
use serde_json::Value;
use std::time::{Duration, Instant};

/// Far more than the few beats each step needs, for a loaded machine; the loop ends as soon as
/// it has seen what it waits for.
const WITHIN: Duration = Duration::from_secs(60);

fn card<'a>(page: &'a Value, key: &str) -> Option<&'a Value> {
    page["cards"].as_array()?.iter().find(|c| c["key"] == key)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_keeps_its_items_working() {
    // A beat every 100 ms, a run in 4 beats: the seed's runs (62% and 30% done) finish within a
    // few beats, and their workers start their next jobs. Stalled after 2 s without a beat: a
    // seeded run nobody took over (its heartbeat is minutes old) would be stalled at once.
    let demo = Serving::new(&[
        "--demo-every",
        "100ms",
        "--demo-run-for",
        "400ms",
        "--stale-after",
        "2s",
    ])
    .demo()
    .start();
    let you = token("you", "demo", false);
    let c = demo.client();
    let deadline = Instant::now() + WITHIN;
    let mut poll = tokio::time::interval(Duration::from_millis(50));
    // Each run's first progress seen, by id: on a loaded machine the seeded training run may
    // have finished before the first page, so progress is judged on whichever runs are seen
    // running (the workers go on starting runs).
    let mut first_seen = std::collections::HashMap::<String, f64>::new();
    let (mut moved, mut finished, mut started) = (false, false, false);
    while !(moved && finished && started) {
        assert!(
            Instant::now() < deadline,
            "within {WITHIN:?}: a run's progress moved {moved}, nightly-train finished {finished}, thumbnails started {started}"
        );
        poll.tick().await;
        let page = c.page(&you, "demo", "cap=50").await.value();
        for c in page["cards"].as_array().unwrap() {
            if c["stalled"] == true {
                assert_eq!(
                    c["key"], "etl-orders",
                    "only etl-orders is meant to stall: {c}"
                );
            }
            // Moved while running: a run seen only at its start and at its end has not shown
            // its progress moving.
            if let (Some(id), Some(progress), true) = (
                c["id"].as_str(),
                c["progress"].as_f64(),
                c["status"] == "running",
            ) {
                let first = *first_seen.entry(id.to_string()).or_insert(progress);
                moved |= progress > first;
            }
        }
        let Some(train) = card(&page, "nightly-train") else {
            continue;
        };
        let progress = train["progress"].as_f64().unwrap_or(0.0);
        finished |= train["status"] == "succeeded" && progress == 1.0;
        // Ada's next job, started after the training run finished.
        started |= card(&page, "thumbnails").is_some_and(|c| c["status"] == "running");
    }
    assert!(
        card(&c.page(&you, "demo", "cap=50").await.value(), "etl-orders")
            .is_some_and(|c| c["stalled"] == true),
        "the one meant to stall still is"
    );
}

#[test]
fn a_demo_pace_that_would_stall_its_cards_is_refused_at_start() {
    let refused = Serving::new(&["--demo-every", "10m", "--stale-after", "15m"])
        .demo()
        .refused();
    assert!(
        refused.contains("under half of PICKUP_STALE_AFTER"),
        "{refused}"
    );
}
