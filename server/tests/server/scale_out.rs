//! Scale-out: two servers (served in this process as `pickup serve` serves) on one shared store,
//! as production runs them behind a load balancer. For each backend two processes can share (the local file system always;
//! Azurite and moto when `scripts/emulators.sh run -- …` has started them; GCS when
//! `PICKUP_TEST_GCS_URL` is set), in four phases:
//!
//! 1. [`start`]: two servers (`common::in_process::Served`, which `http_api` uses too) on one
//!    fresh root of the store, each running its janitor every few seconds.
//! 2. [`burst`]: 16 producers alternate between the two servers over HTTP: 480 registrations
//!    in workspace `scale` (one in five is then PUT to `failed` on the other server, and with
//!    `PICKUP_KEEP_FINISHED=1s` is dead a second later; one in ten is a re-run of the previous
//!    key, made within the clock skew of it: both in flight, the re-run is shown and the
//!    earlier run kept, since either may really be the newest), plus 32 in a small workspace
//!    `scale-small`. Meanwhile readers call `GET /recent` on both servers, and every read
//!    prunes what it found dead; the sweep of `pickup prune --ws …` runs in a loop beside the
//!    janitors; a
//!    watcher lists the store itself: every registered item that is meant to stay live must be
//!    in every listing taken after its registration was answered. Half-way, the producers wait
//!    (on a watch channel, not a sleep) until the watcher has seen a dead item pruned, so
//!    pruning provably overlaps registering.
//! 3. [`confirm`]: after a last sweep, the store lists exactly the live items (none
//!    lost, every dead one pruned), and both servers' `recent` show the same 50 newest of
//!    `scale` (50 is the largest cap) and every live item of `scale-small`. The figures are
//!    printed (`-- --nocapture`).
//! 4. [`shutdown`]: both servers stop.

use crate::common;
use crate::common::client::{token, Answer, TestClient};
use crate::common::in_process::{flags, Served};
use pickup::index::{Index, Limits, SystemClock, Workspace};
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::task::JoinHandle;

const PRODUCERS: usize = 16;
// 480 registrations in `scale`: sized to what the run proves (the producers' half-way wait,
// not the count, makes pruning overlap registering), on two cores beside the emulators.
const PER_PRODUCER: usize = 30;
const READERS_PER_SERVER: usize = 1;
const WS: &str = "scale";
const WS_SMALL: &str = "scale-small";

mod burst;
use burst::{burst, Burst};

/// The settings both servers get: the limits of [`limits`], on the same store.
const LIMITS: [(&str, &str); 5] = [
    ("PICKUP_KEEP_FINISHED", "1s"),
    ("PICKUP_TTL", "7d"),
    ("PICKUP_GRACE", "60s"),
    ("PICKUP_STALE_AFTER", "15m"),
    ("PICKUP_CAP", "8"),
];

/// [`LIMITS`], as the sweeps of `pickup prune` judge by them.
fn limits() -> Limits {
    Limits {
        keep_finished_ms: 1_000,
        ..Limits::default()
    }
}

/// One scale-out run at a time: they share two cores with the emulators.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_out_file() {
    scale_out("file").await;
}

mod azure {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn scale_out_azure() {
        super::scale_out("azure").await;
    }
}

mod s3 {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn scale_out_s3() {
        super::scale_out("s3").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "no GCS emulator works with object_store here (scripts/emulators.sh); with PICKUP_TEST_GCS_URL=gs://… `-- --ignored` runs it"]
async fn scale_out_gcs() {
    // Asked for by `--ignored`: without its bucket it did not run, so it must not pass.
    assert!(
        std::env::var_os("PICKUP_TEST_GCS_URL").is_some(),
        "scale_out_gcs was asked to run, but PICKUP_TEST_GCS_URL is not set"
    );
    scale_out("gcs").await;
}

async fn scale_out(backend: &str) {
    let test = format!("scale_out_{backend}");
    let Some(b) = common::backends::backend(backend, &test) else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let deployment = start(test, &b);
    let burst = burst(&deployment).await;
    confirm(&deployment, &burst).await;
    shutdown(deployment, &burst);
}

// ---- phase 1: two servers on one store ------------------------------------------------------

/// Two `pickup serve` on one fresh root of a shared store, the tokens the producers and readers
/// use, and the test's own view of the store.
struct Deployment {
    test: String,
    servers: [Served; 2],
    /// The servers' base URLs, for the tasks.
    bases: Arc<[String; 2]>,
    producer_token: String,
    reader_token: String,
    api: Api,
    /// The store opened like the servers open it.
    own: Index,
}

fn start(test: String, b: &common::backends::Backend) -> Deployment {
    assert!(b.shared(), "{test}: two processes cannot share {}", b.name);
    let url = b.fresh_url("scale");
    let serve = |janitor_every: &str| {
        let mut settings = LIMITS.to_vec();
        settings.push(("PICKUP_JANITOR_EVERY", janitor_every));
        let settings = flags(&settings);
        Served::start_on(
            &url,
            &settings.iter().map(String::as_str).collect::<Vec<_>>(),
        )
    };
    let servers = [serve("5s"), serve("7s")];
    let bases = Arc::new([servers[0].url.clone(), servers[1].url.clone()]);
    let both = format!("{WS},{WS_SMALL}");
    let producer_token = token("producer", &both, true);
    let reader_token = token("reader", &both, false);
    let api = Api {
        http: reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(120))
            .build()
            .unwrap(),
    };
    let own = Index::open(&url, limits(), 8, Arc::new(SystemClock))
        .unwrap()
        .with_clock_check();
    Deployment {
        test,
        servers,
        bases,
        producer_token,
        reader_token,
        api,
        own,
    }
}

/// The sweep `pickup prune --ws WS` makes, as an operator runs it beside the servers; returns
/// how many keys it deleted.
async fn prune(index: &Index, ws: &str) -> usize {
    let ws = Workspace::parse(ws).unwrap();
    let sweep = index.sweep(&ws, false).await.unwrap();
    sweep.deleted.values().sum()
}

#[derive(Clone)]
struct Api {
    http: reqwest::Client,
}

impl Api {
    fn at(&self, base: &str) -> TestClient {
        TestClient::with_http(base, self.http.clone())
    }

    async fn register(&self, base: &str, token: &str, ws: &str, key: &str) -> String {
        let body = json!({"key": key, "title": format!("run {key}"), "status": "running", "progress": 0.1});
        let res = self.at(base).registered(token, ws, &body).await;
        let body = answer(res, 201, &format!("POST {base} {ws} {key}"));
        body["id"].as_str().unwrap().to_string()
    }

    async fn fail(&self, base: &str, token: &str, ws: &str, id: &str) {
        let body = json!({"title": "failed run", "status": "failed", "progress": 1.0});
        let res = self.at(base).update(token, ws, id, &body).await;
        assert_eq!(res.status, 200, "PUT {base} {id}: {}", res.text());
    }

    async fn recent(&self, base: &str, token: &str, ws: &str, cap: u32) -> Value {
        let res = self.at(base).page(token, ws, &format!("cap={cap}")).await;
        answer(res, 200, &format!("GET {base} recent {ws}"))
    }
}

/// The JSON body of an answer with the `want`ed status; anything else (a 408 has no body) is a
/// failure that says its status and body.
fn answer(res: Answer, want: u16, what: &str) -> Value {
    let text = res.text();
    assert_eq!(res.status, want, "{what}: {text:?}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what}: {e}: {text:?}"))
}

fn card_ids(page: &Value) -> Vec<String> {
    page["cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

/// What the producers did, to know afterwards what must be live and what must be gone.
#[derive(Default)]
struct Ledger {
    /// (ws, key, id) of every registration.
    all: Vec<(String, String, String)>,
    /// Ids PUT to `failed`: dead one second later.
    doomed: HashSet<String>,
    /// Ids that stay live to the end, confirmed registered (the watcher checks these).
    keepers: Vec<(String, String)>,
    /// Earlier runs of a re-run key, still in flight: kept, never shown.
    rivals: HashSet<String>,
}

async fn listing(index: &Index, ws: &str) -> BTreeSet<String> {
    let ws = Workspace::parse(ws).unwrap();
    let ids = index.items(&ws).await.unwrap();
    ids.iter().map(|id| id.to_string()).collect()
}

// ---- phase 3: nothing live was lost, nothing dead is left -------------------------------------

/// What the ledger says must be live: the newest run of each key, unless it was failed.
struct Expected {
    live: BTreeSet<String>,
    live_small: BTreeSet<String>,
    /// What the store must list in `scale` at the end: the live items and the rivals kept
    /// beside them.
    kept: BTreeSet<String>,
    /// Everything else registered in `scale`.
    dead: BTreeSet<String>,
    registered_big: usize,
}

fn expected(ledger: &Ledger) -> Expected {
    let mut newest: HashMap<(String, String), String> = HashMap::new();
    for (ws, key, id) in &ledger.all {
        let e = newest
            .entry((ws.clone(), key.clone()))
            .or_insert_with(|| id.clone());
        if id < e {
            *e = id.clone(); // ids sort newest first
        }
    }
    let live_of = |ws: &str| -> BTreeSet<String> {
        newest
            .iter()
            .filter(|((w, _), id)| w == ws && !ledger.doomed.contains(*id))
            .map(|(_, id)| id.clone())
            .collect()
    };
    let (live, live_small) = (live_of(WS), live_of(WS_SMALL));
    let kept: BTreeSet<String> = live.iter().chain(&ledger.rivals).cloned().collect();
    let dead: BTreeSet<String> = ledger
        .all
        .iter()
        .filter(|(ws, _, id)| ws == WS && !kept.contains(id))
        .map(|(_, _, id)| id.clone())
        .collect();
    let registered_big = ledger.all.iter().filter(|(ws, _, _)| ws == WS).count();
    Expected {
        live,
        live_small,
        kept,
        dead,
        registered_big,
    }
}

/// After one last `pickup prune`: the store lists exactly what must be live (none lost, every
/// dead one pruned), no live marker went missing during the burst, pruning ran during it, no
/// page was partial, and both servers show the same pages.
async fn confirm(d: &Deployment, burst: &Burst) {
    let (test, own, ledger) = (&d.test, &d.own, &burst.ledger);
    let want = expected(ledger);
    assert_eq!(want.registered_big, PRODUCERS * PER_PRODUCER);
    assert_eq!(
        ledger.keepers.iter().filter(|(ws, _)| ws == WS).count(),
        want.live.len(),
        "the keepers are exactly the live items"
    );

    let at_end_of_burst = listing(own, WS).await;
    let pruned_during_burst = want
        .dead
        .iter()
        .filter(|id| !at_end_of_burst.contains(*id))
        .count();

    // Let the last failed items pass keep-finished (1 s of real time: an age, not a race), then
    // one last janitor pass.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let last_prune = Instant::now();
    prune(&d.own, WS).await;
    prune(&d.own, WS_SMALL).await;
    let last_prune = last_prune.elapsed();

    let final_big = listing(own, WS).await;
    let final_small = listing(own, WS_SMALL).await;
    let lost: Vec<_> = want.kept.difference(&final_big).collect();
    let lost_small: Vec<_> = want.live_small.difference(&final_small).collect();
    let left_dead: Vec<_> = final_big.difference(&want.kept).collect();
    let left_dead_small: Vec<_> = final_small.difference(&want.live_small).collect();

    let mut pages = Vec::new();
    for s in d.bases.iter() {
        pages.push((
            d.api.recent(s, &d.reader_token, WS, 50).await,
            d.api.recent(s, &d.reader_token, WS_SMALL, 50).await,
        ));
    }

    let [reads_a, reads_b] = burst.reads;
    println!(
        "{test}: {} registrations over HTTP ({} in {WS}, {} in {WS_SMALL}) by {PRODUCERS} producers alternating between 2 servers in {:.1} s ({:.0}/s); {} failed (dead after 1 s), {} re-runs in flight beside a newer run (kept, not shown); {} reads (server a {reads_a}, server b {reads_b}); pickup prune ran {}×2 and deleted {} keys, beside both servers' janitors and every read's pruning; {pruned_during_burst} of {} dead markers in {WS} already pruned when the burst ended; watcher listed the store {} times and found {} live markers missing; readers, pruner and watcher stopped {:.1} s after the burst; the last sweep of both workspaces took {:.1} s; at the end: {} live in {WS} and {} in {WS_SMALL}, {} lost, {} dead left",
        ledger.all.len(),
        want.registered_big,
        ledger.all.len() - want.registered_big,
        burst.took.as_secs_f64(),
        ledger.all.len() as f64 / burst.took.as_secs_f64(),
        ledger.doomed.len(),
        ledger.rivals.len(),
        reads_a + reads_b,
        burst.prune_runs,
        burst.prune_deleted,
        want.dead.len(),
        burst.watch_rounds,
        burst.missing_during.len(),
        (burst.wound_down - burst.took).as_secs_f64(),
        last_prune.as_secs_f64(),
        want.live.len(),
        want.live_small.len(),
        lost.len() + lost_small.len(),
        left_dead.len() + left_dead_small.len(),
    );

    let missing_during = &burst.missing_during;
    assert!(
        missing_during.is_empty(),
        "{test}: live markers missing from a listing during the burst: {:?}",
        &missing_during[..missing_during.len().min(10)]
    );
    assert!(
        lost.is_empty() && lost_small.is_empty(),
        "{test}: lost {lost:?} {lost_small:?}"
    );
    assert!(
        left_dead.is_empty() && left_dead_small.is_empty(),
        "{test}: dead markers left after the last prune: {left_dead:?} {left_dead_small:?}"
    );
    assert!(
        pruned_during_burst > 0,
        "{test}: pruning ran during the burst"
    );
    assert_eq!(burst.partial_pages, 0, "{test}: no page was partial");
    assert!(reads_a > 0 && reads_b > 0);

    // Both servers show the same: the 50 newest live items of `scale` (the largest cap), and
    // every live item of `scale-small`.
    let newest_50: Vec<String> = want.live.iter().take(50).cloned().collect();
    let all_small: Vec<String> = want.live_small.iter().cloned().collect();
    for (s, (big, small)) in d.bases.iter().zip(&pages) {
        assert_eq!(card_ids(big), newest_50, "{test}: {s} recent {WS}");
        assert_eq!(big["more"], json!(true));
        assert_eq!(big["partial"], json!(false));
        assert_eq!(card_ids(small), all_small, "{test}: {s} recent {WS_SMALL}");
        assert_eq!(small["more"], json!(false));
        assert_eq!(small["partial"], json!(false));
    }
}

// ---- phase 4: shutdown --------------------------------------------------------------------------

fn shutdown(d: Deployment, burst: &Burst) {
    let Deployment { test, servers, .. } = d;
    drop(servers);
    println!(
        "{test}: ok ({:.1} s)",
        burst.started.elapsed().as_secs_f64()
    );
}
