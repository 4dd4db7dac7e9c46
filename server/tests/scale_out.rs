//! Scale-out: two `pickup serve` processes on one shared store, as production runs them behind a
//! load balancer. For each backend (the local file system always; Azurite and moto when
//! `scripts/emulators.sh run -- …` has started them; GCS when `PICKUP_TEST_GCS_URL` is set):
//!
//! - 16 producers alternate between the two servers over HTTP: 2,000 registrations in workspace
//!   `scale` (one in five is then PUT to `failed` on the other server, and with
//!   `PICKUP_KEEP_FINISHED=1s` is dead a second later; one in ten is a re-run of the previous
//!   key, made within the clock skew of it: both in flight, the re-run is shown and the earlier
//!   run kept, since either may really be the newest), plus 80 in a small workspace
//!   `scale-small`;
//! - readers call `GET /recent` on both servers throughout, and every read prunes what it found
//!   dead; both servers run their janitor every few seconds, and `pickup prune --ws …` runs in
//!   a loop beside them;
//! - a watcher lists the store itself throughout: every registered item that is meant to stay
//!   live must be in every listing taken after its registration was answered.
//!
//! Afterwards: the store lists exactly the live items (none lost, every dead one pruned), both
//! servers' `recent` show the same 50 newest of `scale` (50 is the largest cap) and every live
//! item of `scale-small`. The figures are printed (`-- --nocapture`).

#[path = "common/backends.rs"]
mod backends;

use pickup::clock::SystemClock;
use pickup::index::Index;
use pickup::names::Workspace;
use pickup::store::Store;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashSet};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PRODUCERS: usize = 16;
const PER_PRODUCER: usize = 125; // 2,000 registrations in `scale`
const READERS_PER_SERVER: usize = 1;
const WS: &str = "scale";
const WS_SMALL: &str = "scale-small";

/// One scale-out run at a time: they share two cores with the emulators.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn pickup_bin() -> &'static str {
    env!("CARGO_BIN_EXE_pickup")
}

/// A `pickup serve` child process, killed (by its own handle) when dropped. If the test is
/// failing, its log is printed first.
struct Server {
    name: String,
    child: Child,
    base: String,
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            eprintln!("--- {} log (last 40 lines) ---", self.name);
            for l in tail.iter().rev() {
                eprintln!("{l}");
            }
        }
    }
}

/// The environment both servers and every `pickup prune` get: the same store and limits.
fn pickup_env(cmd: &mut Command, url: &str, secret: &str) {
    cmd.env("PICKUP_STORE", url)
        .env("PICKUP_SECRET", secret)
        .env("PICKUP_KEEP_FINISHED", "1s")
        .env("PICKUP_TTL", "7d")
        .env("PICKUP_GRACE", "60s")
        .env("PICKUP_STALE_AFTER", "15m")
        .env("PICKUP_CAP", "8")
        .env("PICKUP_LOG", "warn")
        .env_remove("PICKUP_ALLOWED_ORIGINS");
}

fn start_server(
    name: &str,
    url: &str,
    secret: &str,
    janitor_every: &str,
    dir: &std::path::Path,
) -> Server {
    let log = dir.join(format!("{name}.log"));
    let mut cmd = Command::new(pickup_bin());
    cmd.arg("serve")
        .env("PICKUP_ADDR", "127.0.0.1:0")
        .env("PICKUP_SITE", dir.join("no-site"))
        .env("PICKUP_JANITOR_EVERY", janitor_every)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap());
    pickup_env(&mut cmd, url, secret);
    let mut child = cmd.spawn().expect("start pickup serve");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        if let Some(Ok(first)) = lines.next() {
            let _ = tx.send(first);
        }
        for _ in lines {} // keep draining so the server never blocks on a full pipe
    });
    let mut server = Server {
        name: name.to_string(),
        child,
        base: String::new(),
        log,
    };
    let line = rx
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("{name}: no 'pickup listening on' line within 60 s"));
    let addr = line
        .strip_prefix("pickup listening on http://")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{name}: unexpected first line {line:?}"));
    assert!(addr.starts_with("127.0.0.1:"), "{name}: {addr}");
    server.base = format!("http://{addr}");
    server
}

fn token(secret: &str, sub: &str, write: bool) -> String {
    let mut cmd = Command::new(pickup_bin());
    cmd.args([
        "token",
        "--sub",
        sub,
        "--ws",
        &format!("{WS},{WS_SMALL}"),
        "--ttl",
        "2h",
    ])
    .env("PICKUP_SECRET", secret);
    if write {
        cmd.arg("--write");
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// `pickup prune --ws WS` as an operator runs it; returns how many keys it deleted.
async fn prune_cli(url: &str, secret: &str, ws: &str) -> usize {
    let mut cmd = Command::new(pickup_bin());
    cmd.args(["prune", "--ws", ws]);
    pickup_env(&mut cmd, url, secret);
    let out = tokio::process::Command::from(cmd).output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "pickup prune --ws {ws}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("deleted "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("pickup prune said {stdout:?}"))
}

#[derive(Clone)]
struct Api {
    http: reqwest::Client,
}

impl Api {
    async fn register(&self, base: &str, token: &str, ws: &str, key: &str) -> String {
        let res = self
            .http
            .post(format!("{base}/api/v1/workspaces/{ws}/items"))
            .bearer_auth(token)
            .json(&json!({"key": key, "title": format!("run {key}"), "status": "running", "progress": 0.1}))
            .send()
            .await
            .unwrap();
        let status = res.status();
        let body: Value = res.json().await.unwrap();
        assert_eq!(status, 201, "POST {base} {ws} {key}: {body}");
        body["id"].as_str().unwrap().to_string()
    }

    async fn fail(&self, base: &str, token: &str, ws: &str, id: &str) {
        let res = self
            .http
            .put(format!("{base}/api/v1/workspaces/{ws}/items/{id}"))
            .bearer_auth(token)
            .json(&json!({"title": "failed run", "status": "failed", "progress": 1.0}))
            .send()
            .await
            .unwrap();
        let status = res.status();
        assert_eq!(
            status,
            200,
            "PUT {base} {id}: {}",
            res.text().await.unwrap_or_default()
        );
    }

    async fn recent(&self, base: &str, token: &str, ws: &str, cap: u32) -> Value {
        let res = self
            .http
            .get(format!("{base}/api/v1/workspaces/{ws}/recent?cap={cap}"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        let status = res.status();
        let body: Value = res.json().await.unwrap();
        assert_eq!(status, 200, "GET {base} recent {ws}: {body}");
        body
    }
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
    let scope = pickup::store::Scope::Markers(Workspace::parse(ws).unwrap());
    let found = index.store().list(&scope).await.unwrap();
    found.ids().map(|id| id.to_string()).collect()
}

async fn scale_out(backend: &str) {
    let _one = ONE_AT_A_TIME.lock().await;
    let test = format!("scale_out_{backend}");
    let Some(b) = backends::backends(&test)
        .into_iter()
        .find(|b| b.name == backend)
    else {
        println!("{test}: SKIPPED (backend {backend} is not configured; see the line above)");
        return;
    };
    let url = b.fresh_url("scale");
    let secret = format!("{}{}", backends::unique("s"), backends::unique("t"));
    let dir = tempfile::tempdir().unwrap();
    let a = start_server("server-a", &url, &secret, "5s", dir.path());
    let bsrv = start_server("server-b", &url, &secret, "7s", dir.path());
    let servers = Arc::new([a.base.clone(), bsrv.base.clone()]);
    let producer_token = token(&secret, "producer", true);
    let reader_token = token(&secret, "reader", false);
    let api = Api {
        http: reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(120))
            .build()
            .unwrap(),
    };
    // The test's own view of the store, opened like the servers open it.
    let store = Store::open(&url).unwrap();
    let own = Index::new(store, Default::default(), 8, Arc::new(SystemClock));

    let started = Instant::now();
    let done = Arc::new(AtomicBool::new(false));
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let reads = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let partial_pages = Arc::new(AtomicUsize::new(0));

    let readers: Vec<_> = (0..2 * READERS_PER_SERVER)
        .map(|r| {
            let (api, servers, token, done, reads, partial) = (
                api.clone(),
                servers.clone(),
                reader_token.clone(),
                done.clone(),
                reads.clone(),
                partial_pages.clone(),
            );
            tokio::spawn(async move {
                let s = r % 2;
                for n in 0..20_000 {
                    if done.load(Ordering::SeqCst) {
                        break;
                    }
                    let ws = if n % 4 == 3 { WS_SMALL } else { WS };
                    // The widget's default page of 8 cards, as the widget asks for it.
                    let page = api.recent(&servers[s], &token, ws, 8).await;
                    let ids = card_ids(&page);
                    assert!(ids.windows(2).all(|w| w[0] < w[1]), "newest first: {ids:?}");
                    let keys: HashSet<&str> = page["cards"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|c| c["key"].as_str().unwrap())
                        .collect();
                    assert_eq!(keys.len(), ids.len(), "one card per key");
                    if page["partial"].as_bool() != Some(false) {
                        partial.fetch_add(1, Ordering::SeqCst);
                    }
                    reads[s].fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            })
        })
        .collect();

    let pruner = {
        let (url, secret, done) = (url.clone(), secret.clone(), done.clone());
        tokio::spawn(async move {
            let (mut runs, mut deleted) = (0, 0);
            for _ in 0..500 {
                if done.load(Ordering::SeqCst) {
                    break;
                }
                deleted += prune_cli(&url, &secret, WS).await;
                deleted += prune_cli(&url, &secret, WS_SMALL).await;
                runs += 1;
                tokio::time::sleep(Duration::from_secs(3)).await;
            }
            (runs, deleted)
        })
    };

    // Half-way through, producers wait until some dead item has been pruned (by a read, a
    // janitor or `pickup prune`): pruning provably overlaps registering, however fast the
    // store. The watcher says when it first sees a failed item gone from the store.
    let (pruned_tx, pruned_rx) = tokio::sync::watch::channel(false);
    let watcher = {
        let (own, ledger, done) = (own.clone(), ledger.clone(), done.clone());
        tokio::spawn(async move {
            let (mut rounds, mut missing) = (0, Vec::new());
            for _ in 0..2_000 {
                if done.load(Ordering::SeqCst) {
                    break;
                }
                // Everything confirmed before the listing starts must be in it.
                let (keepers, doomed) = {
                    let l = ledger.lock().unwrap();
                    (l.keepers.clone(), l.doomed.clone())
                };
                let (big, small) = (listing(&own, WS).await, listing(&own, WS_SMALL).await);
                if doomed
                    .iter()
                    .any(|id| !big.contains(id) && !small.contains(id))
                {
                    pruned_tx.send_replace(true);
                }
                for (ws, id) in keepers {
                    let listed = if ws == WS { &big } else { &small };
                    if !listed.contains(&id) {
                        missing.push(id);
                    }
                }
                rounds += 1;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            (rounds, missing)
        })
    };

    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let (api, servers, token, ledger) = (
                api.clone(),
                servers.clone(),
                producer_token.clone(),
                ledger.clone(),
            );
            let mut pruned = pruned_rx.clone();
            tokio::spawn(async move {
                for i in 0..PER_PRODUCER {
                    if i == PER_PRODUCER / 2 {
                        let seen = pruned.wait_for(|p| *p);
                        tokio::time::timeout(Duration::from_secs(120), seen)
                            .await
                            .expect("no dead item was pruned while producers registered")
                            .unwrap();
                    }
                    // Alternate between the servers; a doomed item is failed on the other one.
                    let (here, there) = (&servers[(p + i) % 2], &servers[(p + i + 1) % 2]);
                    let key = match i % 10 {
                        2 | 7 => format!("p{p}-d{i}"),
                        5 => format!("p{p}-k{}", i - 1), // a re-run: supersedes the previous item
                        _ => format!("p{p}-k{i}"),
                    };
                    let id = api.register(here, &token, WS, &key).await;
                    let doomed = matches!(i % 10, 2 | 7);
                    if doomed {
                        api.fail(there, &token, WS, &id).await;
                    }
                    {
                        let mut l = ledger.lock().unwrap();
                        l.all.push((WS.into(), key.clone(), id.clone()));
                        if doomed {
                            l.doomed.insert(id.clone());
                        } else if i % 10 != 4 || i + 1 == PER_PRODUCER {
                            l.keepers.push((WS.into(), id.clone()));
                        } else {
                            // Re-run right after, within the clock skew: kept, not shown.
                            l.rivals.insert(id.clone());
                        }
                    }
                    // The small workspace: 3 live and 2 doomed items per producer.
                    if i % 25 == 0 {
                        let key = format!("p{p}-s{i}");
                        let id = api.register(there, &token, WS_SMALL, &key).await;
                        let doomed = i % 50 == 25;
                        if doomed {
                            api.fail(here, &token, WS_SMALL, &id).await;
                        }
                        let mut l = ledger.lock().unwrap();
                        l.all.push((WS_SMALL.into(), key, id.clone()));
                        if doomed {
                            l.doomed.insert(id);
                        } else {
                            l.keepers.push((WS_SMALL.into(), id));
                        }
                    }
                }
            })
        })
        .collect();
    for p in producers {
        p.await.unwrap();
    }
    let burst = started.elapsed();
    done.store(true, Ordering::SeqCst);
    for r in readers {
        r.await.unwrap();
    }
    let (prune_runs, prune_deleted) = pruner.await.unwrap();
    let (watch_rounds, missing_during) = watcher.await.unwrap();
    let wound_down = started.elapsed();

    // What must be live: the newest run of each key, unless it was failed.
    let ledger = Arc::try_unwrap(ledger).ok().unwrap().into_inner().unwrap();
    let mut newest: std::collections::HashMap<(String, String), String> = Default::default();
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
    // What the store must list at the end: the live items and the rivals kept beside them.
    let kept: BTreeSet<String> = live.iter().chain(&ledger.rivals).cloned().collect();
    let dead: BTreeSet<String> = ledger
        .all
        .iter()
        .filter(|(ws, _, id)| ws == WS && !kept.contains(id))
        .map(|(_, _, id)| id.clone())
        .collect();
    let registered_big = ledger.all.iter().filter(|(ws, _, _)| ws == WS).count();
    assert_eq!(registered_big, PRODUCERS * PER_PRODUCER);
    assert_eq!(
        ledger.keepers.iter().filter(|(ws, _)| ws == WS).count(),
        live.len(),
        "the keepers are exactly the live items"
    );

    let at_end_of_burst = listing(&own, WS).await;
    let pruned_during_burst = dead
        .iter()
        .filter(|id| !at_end_of_burst.contains(*id))
        .count();

    // Let the last failed items pass keep-finished, then one last janitor pass.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let last_prune = Instant::now();
    prune_cli(&url, &secret, WS).await;
    prune_cli(&url, &secret, WS_SMALL).await;
    let last_prune = last_prune.elapsed();

    let final_big = listing(&own, WS).await;
    let final_small = listing(&own, WS_SMALL).await;
    let lost: Vec<_> = kept.difference(&final_big).collect();
    let lost_small: Vec<_> = live_small.difference(&final_small).collect();
    let left_dead: Vec<_> = final_big.difference(&kept).collect();
    let left_dead_small: Vec<_> = final_small.difference(&live_small).collect();

    let mut pages = Vec::new();
    for s in servers.iter() {
        pages.push((
            api.recent(s, &reader_token, WS, 50).await,
            api.recent(s, &reader_token, WS_SMALL, 50).await,
        ));
    }

    println!(
        "{test}: {} registrations over HTTP ({} in {WS}, {} in {WS_SMALL}) by {PRODUCERS} producers alternating between 2 servers in {:.1} s ({:.0}/s); {} failed (dead after 1 s), {} re-runs in flight beside a newer run (kept, not shown); {} reads (server a {}, server b {}); pickup prune ran {prune_runs}×2 and deleted {prune_deleted} keys, beside both servers' janitors and every read's pruning; {pruned_during_burst} of {} dead markers in {WS} already pruned when the burst ended; watcher listed the store {watch_rounds} times and found {} live markers missing; readers, pruner and watcher stopped {:.1} s after the burst; the last `pickup prune` of both workspaces took {:.1} s; at the end: {} live in {WS} and {} in {WS_SMALL}, {} lost, {} dead left",
        ledger.all.len(),
        registered_big,
        ledger.all.len() - registered_big,
        burst.as_secs_f64(),
        ledger.all.len() as f64 / burst.as_secs_f64(),
        ledger.doomed.len(),
        ledger.rivals.len(),
        reads[0].load(Ordering::SeqCst) + reads[1].load(Ordering::SeqCst),
        reads[0].load(Ordering::SeqCst),
        reads[1].load(Ordering::SeqCst),
        dead.len(),
        missing_during.len(),
        (wound_down - burst).as_secs_f64(),
        last_prune.as_secs_f64(),
        live.len(),
        live_small.len(),
        lost.len() + lost_small.len(),
        left_dead.len() + left_dead_small.len(),
    );

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
    assert_eq!(
        partial_pages.load(Ordering::SeqCst),
        0,
        "{test}: no page was partial"
    );
    assert!(reads[0].load(Ordering::SeqCst) > 0 && reads[1].load(Ordering::SeqCst) > 0);

    // Both servers show the same: the 50 newest live items of `scale` (the largest cap), and
    // every live item of `scale-small`.
    let newest_50: Vec<String> = live.iter().take(50).cloned().collect();
    let all_small: Vec<String> = live_small.iter().cloned().collect();
    for (s, (big, small)) in servers.iter().zip(&pages) {
        assert_eq!(card_ids(big), newest_50, "{test}: {s} recent {WS}");
        assert_eq!(big["more"], json!(true));
        assert_eq!(big["partial"], json!(false));
        assert_eq!(card_ids(small), all_small, "{test}: {s} recent {WS_SMALL}");
        assert_eq!(small["more"], json!(false));
        assert_eq!(small["partial"], json!(false));
    }
    drop((a, bsrv));
    println!("{test}: ok ({:.1} s)", started.elapsed().as_secs_f64());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_out_file() {
    scale_out("file").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_out_azure() {
    scale_out("azure").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_out_s3() {
    scale_out("s3").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_out_gcs() {
    scale_out("gcs").await;
}
