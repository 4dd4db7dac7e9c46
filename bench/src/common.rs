//! Small helpers shared by the sections.

use app::contract::{NewItem, Owner, Status};
use pickup::index::RecordLookup;
use pickup::index::Workspace;
use pickup::index::{new_record, ItemId};
use pickup::index::{Expect, Key, Store};
use std::cell::Cell;

pub fn ws_name() -> Workspace {
    Workspace::parse("bench").expect("a valid workspace")
}

pub fn owner() -> Owner {
    Owner {
        sub: "producer".into(),
        name: "Producer".into(),
    }
}

pub fn producer() -> pickup::index::Producer {
    pickup::index::Producer {
        user: pickup::index::UserId::parse("producer").expect("a valid user"),
        name: "Producer".into(),
    }
}

pub fn now_ms() -> u64 {
    chrono::Utc::now().timestamp_millis().max(0) as u64
}

pub fn new_item(key: &str, status: Status) -> NewItem {
    NewItem {
        key: key.into(),
        title: format!("bench item {key}"),
        url: Some(format!("/runs/{key}")),
        status: Some(status),
        progress: None,
    }
}

/// The record `register` would write for `id`, as bytes.
pub fn record_bytes(ws: &Workspace, id: &ItemId, status: Status) -> Vec<u8> {
    let item = new_item(id.key().as_str(), status);
    let rec = new_record(ws, id, &item, owner()).expect("a valid record");
    serde_json::to_vec(&rec).expect("a record serialises")
}

/// Write a record create-only, as `Index::register` does.
pub async fn put_record_create(
    store: &Store,
    ws: &Workspace,
    id: &ItemId,
    status: Status,
) -> Result<(), pickup::index::StoreError> {
    let key = Key::Record(ws.clone(), id.clone());
    let bytes = record_bytes(ws, id, status).into();
    store.write(&key, bytes, Expect::Absent).await.map(drop)
}

/// Read an item's record through Pickup's store, as the index's resolver does.
pub async fn lookup(store: &Store, ws: &Workspace, id: &ItemId) -> RecordLookup {
    RecordLookup::from(store.read(&Key::Record(ws.clone(), id.clone())).await)
}

thread_local! {
    static RNG: Cell<u64> = Cell::new({
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos() as u64;
        let here = &t as *const u64 as u64;
        (t ^ here.rotate_left(32)) | 1
    });
}

/// xorshift64*: jitter for back-off, nothing more.
pub fn rand_u64() -> u64 {
    RNG.with(|r| {
        let mut x = r.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        r.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    })
}

pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

pub fn bench_dir() -> std::path::PathBuf {
    std::path::PathBuf::from("target/bench")
}

pub fn write_json<T: serde::Serialize>(
    name: &str,
    value: &T,
) -> anyhow::Result<std::path::PathBuf> {
    let dir = bench_dir();
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(value)?)?;
    Ok(path)
}

pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The machine a section ran on, as its JSON records it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Machine {
    pub nproc: usize,
    pub memory_gib: f64,
    pub cpu: String,
    pub kernel: String,
    /// The 1-minute load average when the section started (/proc/loadavg): the cores are
    /// shared, and a load above `nproc` means the section got less than all of them.
    #[serde(default)]
    pub load_avg_1m: Option<f64>,
}

pub fn machine() -> Machine {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kb: u64 = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let nproc = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    Machine {
        nproc,
        memory_gib: (mem_kb as f64 / 1024.0 / 1024.0 * 10.0).round() / 10.0,
        cpu,
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
            .to_string(),
        load_avg_1m: std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|l| l.split_whitespace().next()?.parse().ok()),
    }
}
