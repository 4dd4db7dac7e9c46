//! Section 2: what a read costs against the floor. `recent` (Index::recent + apply, cap 8) versus
//! the store work no reader can avoid: one listing of `markers/{ws}/` (on a store that lists in
//! key order, only as far as the first 8 names; elsewhere the whole prefix, sorted) plus the 8
//! newest records read in parallel. Workspaces of 100 to 100,000 markers; the newest 30 have
//! records (running items, so the first 8 resolve live), the rest are bare markers, all within
//! the TTL, each of its own sub-key (nothing is superseded, nothing is pruned).

use crate::common::{self, median, ws_name};

use crate::stores::{self, Kind, Root};
use app::contract::{Filter, Status};
use futures::{StreamExt, TryStreamExt};
use object_store::list::{PaginatedListOptions, PaginatedListStore};
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use pickup::index::core::plan::{Ages, Budget, Planner};
use pickup::index::core::verdict::{judge, RecordLookup};
use pickup::index::Index;
use pickup::index::ItemId;
use pickup::index::Limits;
use pickup::index::{SubKey, UserId};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Instant;

const CAP: usize = 8;
const WITH_RECORDS: usize = 30;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    pub store: Kind,
    pub markers: usize,
    pub reps: usize,
    /// Medians, in milliseconds.
    pub recent_ms: f64,
    pub floor_ms: f64,
    pub ratio: f64,
    /// Azure only: the floor with a listing that asks the service for 8 keys
    /// (`PaginatedListStore::list_paginated`, max_keys = 8) instead of its default page.
    pub paged_floor_ms: Option<f64>,
    /// How many keys one `recent` took from the store's listing (on the clouds: how many
    /// the store returned, in pages sized to the read).
    pub recent_listed: u64,
    /// Keys (object metadata entries) the store returned to listings, per `recent` call: what
    /// the listing costs the store, where `recent_listed` is what `recent` consumed of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys_per_recent: Option<f64>,
    pub cards: usize,
    pub recent_samples: Vec<f64>,
    pub floor_samples: Vec<f64>,
    pub seed_s: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Skip {
    pub store: Kind,
    pub markers: Option<usize>,
    pub reason: String,
}

/// target/bench/read.json: written by [`run`], read by the report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    /// RFC 3339, UTC.
    pub measured_at: String,
    pub machine: common::Machine,
    /// Cards per `recent`.
    pub cap: usize,
    /// The newest markers that have records.
    pub records_seeded: usize,
    pub sizes: Vec<usize>,
    pub rows: Vec<Row>,
    pub skipped: Vec<Skip>,
    /// `recent`'s own CPU work, measured on memory.
    pub cpu_us: Option<CpuBreakdown>,
    pub wall_s: f64,
}

/// `recent`'s CPU work apart from the store, in µs (medians of batches).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct CpuBreakdown {
    pub judge_8_records_us: f64,
    pub plan_24_names_us: f64,
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub sizes: Vec<usize>,
    /// The largest workspace each backend is seeded to.
    pub max: fn(Kind) -> usize,
    pub reps: fn(Kind, usize) -> usize,
}

pub fn default_max(kind: Kind) -> usize {
    match kind {
        Kind::Memory | Kind::File | Kind::Latency => 100_000,
        Kind::Azure | Kind::S3 => 10_000,
    }
}

pub fn default_reps(kind: Kind, markers: usize) -> usize {
    match (kind, markers) {
        // Microseconds each: many repetitions cost nothing and steady the median.
        (Kind::Memory, 0..=10_000) => 201,
        (Kind::Memory, _) => 21,
        (_, 0..=1_000) => 21,
        (_, 1_001..=10_000) => 11,
        _ => 7,
    }
}

pub fn quick_max(_: Kind) -> usize {
    1_000
}

pub fn quick_reps(_: Kind, _: usize) -> usize {
    5
}

fn id_of(now: u64, i: usize) -> ItemId {
    // i = 0 is the newest; one marker a second back from a minute ago: 100,000 markers span
    // 28 hours, well inside the 7-day TTL.
    let created = now - 60_000 - i as u64 * 1_000;
    ItemId::new(
        created,
        SubKey::parse(&format!("m{i}")).expect("a valid key"),
    )
    .expect("an id")
}

/// Markers `from..to` (empty objects, written straight to the store), and the records of the
/// newest ones.
async fn seed(
    store: &Arc<dyn ObjectStore>,
    now: u64,
    from: usize,
    to: usize,
) -> anyhow::Result<()> {
    let ws = ws_name();
    let concurrency = 64;
    futures::stream::iter(from..to)
        .map(|i| {
            let (store, ws) = (store.clone(), ws.clone());
            async move {
                let id = id_of(now, i);
                if i < WITH_RECORDS {
                    common::put_record_create(&store, &ws, &id, Status::Running).await?;
                }
                store
                    .put(&common::marker_path(&ws, &id), PutPayload::new())
                    .await?;
                Ok::<_, object_store::Error>(())
            }
        })
        .buffer_unordered(concurrency)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

/// One `recent` and its prune, timed; with the cards shown and the keys the store returned.
async fn time_recent(index: &Index, viewer: &UserId) -> anyhow::Result<(f64, usize, usize)> {
    let t = Instant::now();
    let read = index
        .recent(&ws_name(), viewer, Filter::All, Some(CAP as u32), None)
        .await?;
    index.apply(&read.prune).await;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    anyhow::ensure!(
        read.prune.deletes.is_empty(),
        "the seeded workspace has nothing to prune"
    );
    Ok((ms, read.page.cards.len(), read.listed))
}

/// The floor: one listing (stopped after 8 names where the store lists in key order) and the
/// 8 newest records in parallel.
async fn time_floor(root: &Root) -> anyhow::Result<f64> {
    let store = &root.inner();
    let t = Instant::now();
    let prefix = common::markers_prefix(&ws_name());
    let names: Vec<String> = if root.kind.lists_in_key_order() {
        store
            .list(Some(&prefix))
            .take(CAP)
            .map_ok(|m| m.location.filename().unwrap_or_default().to_string())
            .try_collect()
            .await?
    } else {
        let mut all: Vec<String> = store
            .list(Some(&prefix))
            .map_ok(|m| m.location.filename().unwrap_or_default().to_string())
            .try_collect()
            .await?;
        let n = CAP.min(all.len());
        if n > 0 && n < all.len() {
            all.select_nth_unstable(n - 1);
        }
        all.truncate(n);
        all
    };
    read_records(store, &names).await?;
    Ok(t.elapsed().as_secs_f64() * 1e3)
}

async fn read_records(store: &Arc<dyn ObjectStore>, names: &[String]) -> anyhow::Result<()> {
    let ws = ws_name();
    let gets = names.iter().map(|n| {
        let store = store.clone();
        let id = ItemId::parse(n);
        let ws = ws.clone();
        async move {
            let id = id.map_err(|e| anyhow::anyhow!("{e}"))?;
            let got = store.get(&common::record_path(&ws, &id)).await?;
            got.bytes().await?;
            Ok::<_, anyhow::Error>(())
        }
    });
    for r in futures::future::join_all(gets).await {
        r?;
    }
    anyhow::ensure!(names.len() == CAP, "the floor found {} names", names.len());
    Ok(())
}

/// Azure: the floor with a listing request for exactly 8 keys.
async fn time_paged_floor(root: &Root) -> anyhow::Result<Option<f64>> {
    let Some((az, prefix)) = &root.azure else {
        return Ok(None);
    };
    let t = Instant::now();
    let full = format!("{prefix}/{}/", common::markers_prefix(&ws_name()));
    let page = az
        .list_paginated(
            Some(&full),
            PaginatedListOptions {
                max_keys: Some(CAP),
                ..Default::default()
            },
        )
        .await?;
    let names: Vec<String> = page
        .result
        .objects
        .iter()
        .filter_map(|m| m.location.filename().map(str::to_string))
        .collect();
    read_records(&root.inner(), &names).await?;
    Ok(Some(t.elapsed().as_secs_f64() * 1e3))
}

/// `recent`'s own CPU work, apart from the store: judging 8 fetched records into cards (JSON
/// parsing included) and planning `recent`'s budget of names ([`Budget::RESOLVES_PER_CARD`]
/// per card). Microseconds, medians of batches.
async fn cpu_breakdown(store: &Arc<dyn ObjectStore>, now: u64) -> anyhow::Result<CpuBreakdown> {
    let ws = ws_name();
    let budget = Budget::RESOLVES_PER_CARD * CAP;
    let ids: Vec<ItemId> = (0..budget).map(|i| id_of(now, i)).collect();
    let mut bodies = Vec::new();
    for id in &ids[..CAP] {
        let got = store.get(&common::record_path(&ws, id)).await?;
        bodies.push(got.bytes().await?);
    }
    let names: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
    let limits = Limits::default();
    let none = std::collections::HashSet::new();
    let batch = 200;
    let (mut judge_us, mut plan_us) = (Vec::new(), Vec::new());
    for _ in 0..15 {
        let t = Instant::now();
        for _ in 0..batch {
            for (id, b) in ids.iter().zip(&bodies) {
                #[allow(clippy::useless_conversion)]
                let lookup = RecordLookup::Found(b.clone().into());
                std::hint::black_box(judge(id, lookup, now, &limits));
            }
        }
        judge_us.push(t.elapsed().as_secs_f64() * 1e6 / batch as f64);
        let t = Instant::now();
        for _ in 0..batch {
            let ages = Ages {
                now_ms: now,
                ttl_ms: limits.ttl_ms,
                max_skew_ms: limits.max_skew_ms,
            };
            let mut planner = Planner::new(ages, &none, budget);
            for n in &names {
                let _ = planner.push(n);
            }
            std::hint::black_box(planner.finish());
        }
        plan_us.push(t.elapsed().as_secs_f64() * 1e6 / batch as f64);
    }
    Ok(CpuBreakdown {
        judge_8_records_us: median(&judge_us),
        plan_24_names_us: median(&plan_us),
    })
}

pub async fn run_store(
    kind: Kind,
    plan: &Plan,
    skipped: &mut Vec<Skip>,
    cpu: &mut Option<CpuBreakdown>,
) -> anyhow::Result<Vec<Row>> {
    let root = stores::open(kind, "read")?;
    let limits = Limits::default();
    let index = root.index(limits);
    let viewer = UserId::parse("reader").expect("a valid user");
    let now = common::now_ms();
    let max = (plan.max)(kind);
    let mut seeded = 0;
    let mut rows = Vec::new();
    for &size in &plan.sizes {
        if size > max {
            skipped.push(too_large(kind, size, max));
            continue;
        }
        let t = Instant::now();
        seed(&root.inner(), now, seeded, size).await?;
        seeded = size;
        let seed_s = t.elapsed().as_secs_f64();
        if kind == Kind::Memory && cpu.is_none() {
            *cpu = Some(cpu_breakdown(&root.inner(), now).await?);
        }
        let reps = (plan.reps)(kind, size);
        let mut row = measure(&root, &index, &viewer, reps).await?;
        (row.store, row.markers, row.seed_s) = (kind, size, seed_s);
        log_row(&row);
        rows.push(row);
    }
    Ok(rows)
}

/// A size over this run's limit for the store: skipped, and said so.
fn too_large(kind: Kind, size: usize, max: usize) -> Skip {
    eprintln!(
        "read: {} at {size} markers: skipped (limit {max})",
        kind.name()
    );
    Skip {
        store: kind,
        markers: Some(size),
        reason: format!(
            "over this run's limit for {} ({max} markers): seeding and listing it does not fit the time budget",
            kind.name()
        ),
    }
}

/// `reps` reads of the first page against the floor, after a warm-up (connections, caches),
/// interleaved, alternating which goes first. The row's store, size and seeding time are the
/// caller's to fill in.
async fn measure(
    root: &stores::Root,
    index: &Index,
    viewer: &UserId,
    reps: usize,
) -> anyhow::Result<Row> {
    for _ in 0..2 {
        time_recent(index, viewer).await?;
        time_floor(root).await?;
    }
    let (mut recent, mut floor, mut paged) = (Vec::new(), Vec::new(), Vec::new());
    let (mut cards, mut listed) = (0, 0);
    for r in 0..reps {
        if r % 2 == 0 {
            let (ms, c, l) = time_recent(index, viewer).await?;
            recent.push(ms);
            (cards, listed) = (c, l);
            floor.push(time_floor(root).await?);
        } else {
            floor.push(time_floor(root).await?);
            let (ms, c, l) = time_recent(index, viewer).await?;
            recent.push(ms);
            (cards, listed) = (c, l);
        }
        if let Some(ms) = time_paged_floor(root).await? {
            paged.push(ms);
        }
    }
    let (rm, fm) = (median(&recent), median(&floor));
    Ok(Row {
        store: Kind::Memory,
        markers: 0,
        reps,
        recent_ms: rm,
        floor_ms: fm,
        ratio: rm / fm,
        paged_floor_ms: (!paged.is_empty()).then(|| median(&paged)),
        recent_listed: listed as u64,
        keys_per_recent: Some(listed as f64),
        cards,
        recent_samples: recent,
        floor_samples: floor,
        seed_s: 0.0,
    })
}

fn log_row(row: &Row) {
    eprintln!(
        "read: {:8} {:>7} markers: recent {:8.3} ms, floor {:8.3} ms, ratio {:5.2}{}, recent pulled {} listing entries, {} cards (seeded in {:.1} s, {} reps)",
        row.store.name(),
        row.markers,
        row.recent_ms,
        row.floor_ms,
        row.ratio,
        row.paged_floor_ms
            .map(|p| format!(", floor with an 8-key page {p:.3} ms"))
            .unwrap_or_default(),
        row.recent_listed,
        row.cards,
        row.seed_s,
        row.reps
    );
}

pub async fn run(plan: &Plan, kinds: &[Kind]) -> anyhow::Result<Results> {
    let started = Instant::now();
    let machine = common::machine();
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    let mut cpu = None;
    for &kind in kinds {
        if let Err(reason) = stores::available(kind) {
            eprintln!("read: skipping {}: {reason}", kind.name());
            skipped.push(Skip {
                store: kind,
                markers: None,
                reason,
            });
            continue;
        }
        rows.extend(run_store(kind, plan, &mut skipped, &mut cpu).await?);
    }
    let results = Results {
        measured_at: common::now_rfc3339(),
        machine,
        cap: CAP,
        records_seeded: WITH_RECORDS,
        sizes: plan.sizes.clone(),
        rows,
        skipped,
        cpu_us: cpu,
        wall_s: started.elapsed().as_secs_f64(),
    };
    let path = common::write_json("read.json", &results)?;
    eprintln!(
        "read: wrote {} ({:.0} s)",
        path.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(results)
}
