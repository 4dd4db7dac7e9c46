//! Section 1: the designs under the same workload. P producers register concurrently (every
//! fourth item already finished, so it is dead at once and the reader has something to prune
//! throughout) while one reader lists and prunes in a loop. Afterwards: how many of the live
//! registrations the index or list still holds.

use crate::common::{self, new_item, now_ms, producer, ws_name};
use crate::lists::{supports_update, Backoff, ListError, SharedList};
use crate::stores::{self, Kind, Root};
use app::contract::{Filter, Status};
use pickup::index::Index;
use pickup::index::ItemId;
use pickup::index::Limits;
use pickup::index::{SubKey, UserId};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Design {
    MarkerIndex,
    NaiveList,
    CasList,
}

impl Design {
    pub fn all() -> [Design; 3] {
        [Design::MarkerIndex, Design::NaiveList, Design::CasList]
    }
    pub fn label(self) -> &'static str {
        match self {
            Design::MarkerIndex => "marker index (Pickup)",
            Design::NaiveList => "naive shared list",
            Design::CasList => "compare-and-set list",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    pub store: Kind,
    pub design: Design,
    pub producers: usize,
    pub per_producer: usize,
    pub supported: bool,
    /// Registrations that returned success.
    pub registered: u64,
    /// Of those, the ones still running (never legitimately pruned).
    pub live_registered: u64,
    /// Live registrations missing from the index / list at the end.
    pub lost: u64,
    /// Compare-and-set registrations given up at the deadline (never reported as success).
    pub abandoned: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    pub cas_retries: u64,
    pub reads: u64,
    pub pruned: u64,
    pub elapsed_s: f64,
    pub regs_per_s: f64,
    /// The run hit its time bound before every producer finished its count.
    pub cut_by_deadline: bool,
    /// The compare-and-set list's back-off.
    pub cas_backoff: Option<Backoff>,
    /// A sensitivity run (another back-off), kept out of the main table.
    #[serde(default)]
    pub variant: bool,
    pub note: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Skip {
    pub store: Kind,
    pub reason: String,
}

/// target/bench/designs.json: written by [`run`], read by the report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    /// RFC 3339, UTC.
    pub measured_at: String,
    pub machine: common::Machine,
    pub workload: Workload,
    pub runs: Vec<Run>,
    pub skipped: Vec<Skip>,
    pub wall_s: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Workload {
    pub producers: Vec<usize>,
    pub total_per_run: BTreeMap<Kind, usize>,
    pub time_bound_s: BTreeMap<Kind, f64>,
    /// The share of registrations already finished (dead at once).
    pub finished_fraction: f64,
    pub cas_backoff: BTreeMap<Kind, Backoff>,
    /// The simulated round trip per request, on the stores that have one (memory+20ms).
    #[serde(default)]
    pub round_trip_ms: BTreeMap<Kind, f64>,
    pub readers: usize,
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub producers: Vec<usize>,
    /// Registrations per run (split over the producers), per store.
    pub total: fn(Kind) -> usize,
    /// The time bound of one run, per store.
    pub deadline: fn(Kind) -> Duration,
    /// Overrides the compare-and-set list's back-off cap (ms) on every store.
    pub backoff_cap_ms: Option<u64>,
}

/// The compare-and-set list's back-off, scaled to the store's round trip: from 10 µs up to 20 ms
/// in memory, from 1 ms up to 2 s over a network (real or simulated). (The 2 s cap was the best
/// of 32 ms, 256 ms, 1 s, 2 s and 5 s at P = 64 on Azurite; shorter caps waste the store on
/// losing attempts. At P = 64 and 40 ms per read-and-write, spacing the contenders' attempts
/// one round trip apart needs waits of about 64 × 40 ms ≈ 2.5 s, which the 2 s cap allows.)
pub fn backoff(kind: Kind, cap_ms: Option<u64>) -> Backoff {
    let b = match kind {
        Kind::Memory | Kind::File => Backoff {
            base_us: 10,
            cap_us: 20_000,
        },
        Kind::Latency | Kind::Azure | Kind::S3 => Backoff {
            base_us: 1_000,
            cap_us: 2_000_000,
        },
    };
    Backoff {
        cap_us: cap_ms.map(|c| c * 1_000).unwrap_or(b.cap_us),
        ..b
    }
}

/// The sensitivity run: the compare-and-set list at the largest P with a short cap, on the
/// stores where a request is a round trip.
pub const SHORT_BACKOFF: Backoff = Backoff {
    base_us: 1_000,
    cap_us: 32_000,
};

pub fn default_total(kind: Kind) -> usize {
    match kind {
        Kind::Memory => 64_000,
        Kind::File => 3_200,
        // More than 10 s of round trips even at P = 64 (200 registrations of 3 requests
        // each): every run is cut by its time bound, so each rate is a steady state, not a
        // burst whose start and slowest producer weigh on a 3 s run.
        Kind::Latency => 12_800,
        Kind::Azure | Kind::S3 => 640,
    }
}

pub fn default_deadline(kind: Kind) -> Duration {
    match kind {
        Kind::Memory => Duration::from_secs(5),
        Kind::File => Duration::from_secs(8),
        Kind::Latency | Kind::Azure | Kind::S3 => Duration::from_secs(10),
    }
}

pub fn quick_total(kind: Kind) -> usize {
    default_total(kind) / 8
}

pub fn quick_deadline(_: Kind) -> Duration {
    Duration::from_secs(2)
}

fn limits() -> Limits {
    // A finished item is dead at once, so the readers of every design prune throughout.
    Limits {
        keep_finished_ms: 0,
        ..Limits::default()
    }
}

enum Subject {
    Index(Index),
    List(SharedList),
}

impl Subject {
    async fn register(
        &self,
        p: usize,
        i: usize,
        live: bool,
        deadline: Instant,
    ) -> Result<String, String> {
        let key = format!("p{p}-{i}");
        let status = if live {
            Status::Running
        } else {
            Status::Succeeded
        };
        match self {
            Subject::Index(index) => index
                .register(&ws_name(), &new_item(&key, status), &producer())
                .await
                .map(|r| r.id)
                .map_err(|e| e.to_string()),
            Subject::List(list) => {
                let id = ItemId::new(now_ms(), SubKey::parse(&key).expect("a valid key"))
                    .expect("a valid id");
                common::put_record_create(&list.store, &list.ws, &id, status)
                    .await
                    .map_err(|e| e.to_string())?;
                match list.register(&id.to_string(), deadline).await {
                    Ok(()) => Ok(id.to_string()),
                    Err(ListError::Abandoned) => Err("abandoned".into()),
                    Err(e) => Err(e.to_string()),
                }
            }
        }
    }

    async fn read_and_prune(&self, viewer: &UserId, deadline: Instant) -> Result<usize, String> {
        match self {
            Subject::Index(index) => {
                let read = index
                    .recent(&ws_name(), viewer, Filter::All, Some(8), None)
                    .await
                    .map_err(|e| e.to_string())?;
                Ok(index.apply(&read.prune).await.total())
            }
            Subject::List(list) => match list.read_and_prune(now_ms(), deadline).await {
                // The run is over; the reader's last save lost its race: nothing failed.
                Err(ListError::Abandoned) => Ok(0),
                other => other.map_err(|e| e.to_string()),
            },
        }
    }

    async fn present(&self) -> Result<HashSet<String>, String> {
        match self {
            Subject::Index(index) => index
                .items(&ws_name())
                .await
                .map(|ids| ids.iter().map(|id| id.to_string()).collect())
                .map_err(|e| e.to_string()),
            Subject::List(list) => list.present().await.map_err(|e| e.to_string()),
        }
    }

    fn cas_retries(&self) -> u64 {
        match self {
            Subject::List(l) => l.retries.load(Ordering::Relaxed),
            Subject::Index(_) => 0,
        }
    }
}

fn subject(design: Design, root: &Root, backoff: Backoff) -> Subject {
    match design {
        Design::MarkerIndex => Subject::Index(root.index(limits())),
        Design::NaiveList => Subject::List(SharedList::naive(root.inner(), limits())),
        Design::CasList => Subject::List(SharedList::cas(root.inner(), limits(), backoff)),
    }
}

pub async fn run_one(
    kind: Kind,
    design: Design,
    producers: usize,
    total: usize,
    bound: Duration,
    backoff: Backoff,
) -> anyhow::Result<Run> {
    let per_producer = (total / producers).max(1);
    let root = stores::open(kind, "designs")?;
    let mut run = Run::new(kind, design, producers, per_producer, backoff);
    if design == Design::CasList && !supports_update(&root.inner()).await {
        run.supported = false;
        run.note = format!(
            "not supported: the {} store has no conditional update (PutMode::Update)",
            kind.name()
        );
        return Ok(run);
    }
    let subject = Arc::new(subject(design, &root, backoff));
    let started = Instant::now();
    let deadline = started + bound;
    let done = Arc::new(AtomicBool::new(false));
    let reading = Arc::new(Reading::default());
    let reader = tokio::spawn(read_until_done(
        subject.clone(),
        done.clone(),
        reading.clone(),
        deadline,
    ));
    let tasks: Vec<_> = (0..producers)
        .map(|p| tokio::spawn(produce(subject.clone(), p, per_producer, deadline)))
        .collect();
    let mut live_ids = HashSet::new();
    for t in tasks {
        let made = t.await?;
        run.registered += made.ok.len() as u64;
        live_ids.extend(made.ok.into_iter().filter(|(_, l)| *l).map(|(id, _)| id));
        run.abandoned += made.abandoned;
        run.errors += made.errors;
        if run.first_error.is_none() {
            run.first_error = made.first_error;
        }
        run.cut_by_deadline |= made.cut;
    }
    let elapsed = started.elapsed();
    done.store(true, Ordering::SeqCst);
    reader.await?;

    let present = subject.present().await.map_err(anyhow::Error::msg)?;
    run.live_registered = live_ids.len() as u64;
    run.lost = live_ids.difference(&present).count() as u64;
    run.cas_retries = subject.cas_retries();
    run.reads = reading.reads.load(Ordering::Relaxed);
    run.pruned = reading.pruned.load(Ordering::Relaxed);
    run.elapsed_s = elapsed.as_secs_f64();
    run.regs_per_s = run.registered as f64 / run.elapsed_s.max(1e-9);
    let read_errors = reading.errors.load(Ordering::Relaxed);
    if read_errors > 0 {
        run.note = format!("{read_errors} reads failed");
    }
    Ok(run)
}

impl Run {
    /// A run of `design` on `kind` before anything is measured.
    fn new(
        kind: Kind,
        design: Design,
        producers: usize,
        per_producer: usize,
        backoff: Backoff,
    ) -> Run {
        Run {
            store: kind,
            design,
            producers,
            per_producer,
            supported: true,
            registered: 0,
            live_registered: 0,
            lost: 0,
            abandoned: 0,
            errors: 0,
            first_error: None,
            cas_retries: 0,
            reads: 0,
            pruned: 0,
            elapsed_s: 0.0,
            regs_per_s: 0.0,
            cut_by_deadline: false,
            cas_backoff: (design == Design::CasList).then_some(backoff),
            variant: false,
            note: String::new(),
        }
    }
}

/// What the reader did while the producers registered.
#[derive(Default)]
struct Reading {
    reads: AtomicU64,
    pruned: AtomicU64,
    errors: AtomicU64,
}

/// The reader: reads and prunes, one read after another, until the producers are `done`.
async fn read_until_done(
    subject: Arc<Subject>,
    done: Arc<AtomicBool>,
    reading: Arc<Reading>,
    deadline: Instant,
) {
    let viewer = UserId::parse("reader").expect("a valid user");
    // Bounded by count and by the producers' end (which the deadline bounds).
    for _ in 0..1_000_000 {
        if done.load(Ordering::SeqCst) {
            break;
        }
        match subject.read_and_prune(&viewer, deadline).await {
            Ok(n) => {
                reading.pruned.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(_) => {
                reading.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        reading.reads.fetch_add(1, Ordering::Relaxed);
        tokio::task::yield_now().await;
    }
}

/// What one producer registered, and what stopped it.
struct Produced {
    /// The ids registered, each with whether it is live.
    ok: Vec<(String, bool)>,
    abandoned: u64,
    errors: u64,
    first_error: Option<String>,
    /// Stopped by the deadline (or an abandoned compare-and-set).
    cut: bool,
}

/// Producer `p`: `per_producer` registrations, one in four of them finished, until the
/// deadline.
async fn produce(
    subject: Arc<Subject>,
    p: usize,
    per_producer: usize,
    deadline: Instant,
) -> Produced {
    let mut made = Produced {
        ok: Vec::with_capacity(per_producer),
        abandoned: 0,
        errors: 0,
        first_error: None,
        cut: false,
    };
    for i in 0..per_producer {
        if Instant::now() >= deadline {
            made.cut = true;
            break;
        }
        let live = i % 4 != 3;
        match subject.register(p, i, live, deadline).await {
            Ok(id) => made.ok.push((id, live)),
            Err(e) if e == "abandoned" => {
                made.abandoned += 1;
                made.cut = true;
                break;
            }
            Err(e) => {
                made.errors += 1;
                made.first_error.get_or_insert(e);
            }
        }
        // Let the reader in: an in-memory store never makes a task wait.
        tokio::task::yield_now().await;
    }
    made
}

pub async fn run(plan: &Plan, kinds: &[Kind]) -> anyhow::Result<Results> {
    let mut runs = Vec::new();
    let mut skipped = Vec::new();
    let started = Instant::now();
    let machine = common::machine();
    for &kind in kinds {
        if let Err(reason) = stores::available(kind) {
            eprintln!("designs: skipping {}: {reason}", kind.name());
            skipped.push(Skip {
                store: kind,
                reason,
            });
            continue;
        }
        let max_p = plan.producers.iter().copied().max().unwrap_or(1);
        for &p in &plan.producers {
            for (design, b, variant) in todo(plan, kind, p, max_p) {
                let mut r = run_one(
                    kind,
                    design,
                    p,
                    (plan.total)(kind),
                    (plan.deadline)(kind),
                    b,
                )
                .await?;
                r.variant = variant;
                log_run(&r, b);
                runs.push(r);
            }
        }
    }
    let results = Results {
        measured_at: common::now_rfc3339(),
        machine,
        workload: workload(plan, kinds),
        runs,
        skipped,
        wall_s: started.elapsed().as_secs_f64(),
    };
    let path = common::write_json("designs.json", &results)?;
    eprintln!(
        "designs: wrote {} ({:.0} s)",
        path.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(results)
}

/// The runs of one store at `p` producers: every design with the store's back-off, and at
/// the most producers on a networked store, the compare-and-set list with a short cap too
/// (a variant).
fn todo(plan: &Plan, kind: Kind, p: usize, max_p: usize) -> Vec<(Design, Backoff, bool)> {
    let mut todo: Vec<(Design, Backoff, bool)> = Design::all()
        .into_iter()
        .map(|d| (d, backoff(kind, plan.backoff_cap_ms), false))
        .collect();
    if kind != Kind::Memory && kind != Kind::File && p == max_p && plan.backoff_cap_ms.is_none() {
        todo.push((Design::CasList, SHORT_BACKOFF, true));
    }
    todo
}

fn log_run(r: &Run, b: Backoff) {
    eprintln!(
        "designs: {:8} P={:<3} {:24} {}",
        r.store.name(),
        r.producers,
        if r.variant {
            format!("{} ({} ms back-off cap)", r.design.label(), b.cap_us / 1000)
        } else {
            r.design.label().to_string()
        },
        if r.supported {
            format!(
                "{:>6} regs in {:5.2} s = {:>9.1}/s, lost {}/{} live{}{}, {} reads, {} pruned, {} CAS retries{}",
                r.registered,
                r.elapsed_s,
                r.regs_per_s,
                r.lost,
                r.live_registered,
                if r.abandoned > 0 { format!(", {} abandoned", r.abandoned) } else { String::new() },
                if r.errors > 0 { format!(", {} errors ({})", r.errors, r.first_error.clone().unwrap_or_default()) } else { String::new() },
                r.reads,
                r.pruned,
                r.cas_retries,
                if r.cut_by_deadline { ", cut by the time bound" } else { "" },
            )
        } else {
            r.note.clone()
        }
    );
}

/// What the run asked of each store it measured: only those, so the report describes what
/// it shows.
fn workload(plan: &Plan, kinds: &[Kind]) -> Workload {
    let measured = || kinds.iter().copied();
    Workload {
        producers: plan.producers.clone(),
        total_per_run: measured().map(|k| (k, (plan.total)(k))).collect(),
        time_bound_s: measured()
            .map(|k| (k, (plan.deadline)(k).as_secs_f64()))
            .collect(),
        finished_fraction: 0.25,
        cas_backoff: measured()
            .map(|k| (k, backoff(k, plan.backoff_cap_ms)))
            .collect(),
        round_trip_ms: measured()
            .filter_map(|k| k.round_trip().map(|rt| (k, rt.as_secs_f64() * 1e3)))
            .collect(),
        readers: 1,
    }
}
