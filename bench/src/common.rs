//! Small helpers shared by the sections.

use app::contract::{ItemRecord, NewItem, Owner, Status};
use chrono::DateTime;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutPayload};
use pickup::index::core::verdict::RecordLookup;
use pickup::index::ItemId;
use pickup::index::Workspace;
use std::cell::Cell;
use std::sync::Arc;

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
        ..NewItem::default()
    }
}

/// Where Pickup keeps a workspace's markers and an item's record, as DESIGN.md lays the keys
/// out ("Keys in the store"): what the seed writes and the floor reads straight, without
/// Pickup, so that both meet the objects Pickup's own reads do.
pub fn markers_prefix(ws: &Workspace) -> Path {
    Path::from(format!("ws/{ws}/markers"))
}

pub fn marker_path(ws: &Workspace, id: &ItemId) -> Path {
    Path::from(format!("ws/{ws}/markers/{id}"))
}

pub fn record_path(ws: &Workspace, id: &ItemId) -> Path {
    Path::from(format!("ws/{ws}/items/{id}.json"))
}

/// The record `register` would write for `id`, as bytes.
pub fn record_bytes(ws: &Workspace, id: &ItemId, status: Status) -> Vec<u8> {
    let item = new_item(id.key().as_str(), status);
    let at = DateTime::from_timestamp_millis(id.created_ms() as i64).unwrap_or_default();
    let rec = ItemRecord {
        id: id.to_string(),
        ws: ws.to_string(),
        key: id.key().to_string(),
        title: item.title,
        url: item.url,
        status,
        owner: owner(),
        created_at: at,
        updated_at: at,
        heartbeat_at: (status == Status::Running).then_some(at),
        finished_at: status.is_finished().then_some(at),
        ..ItemRecord::default()
    };
    serde_json::to_vec(&rec).expect("a record serialises")
}

/// Write a record create-only, as `Index::register` does.
pub async fn put_record_create(
    store: &Arc<dyn ObjectStore>,
    ws: &Workspace,
    id: &ItemId,
    status: Status,
) -> object_store::Result<()> {
    let bytes = PutPayload::from(record_bytes(ws, id, status));
    store
        .put_opts(&record_path(ws, id), bytes, PutMode::Create.into())
        .await
        .map(drop)
}

/// Read an item's record straight from the store, as the index's resolver would.
pub async fn lookup(store: &Arc<dyn ObjectStore>, ws: &Workspace, id: &ItemId) -> RecordLookup {
    match store.get(&record_path(ws, id)).await {
        Ok(got) => match got.bytes().await {
            Ok(bytes) => RecordLookup::Found(bytes),
            Err(e) => RecordLookup::Failed(e.to_string()),
        },
        Err(object_store::Error::NotFound { .. }) => RecordLookup::NotFound,
        Err(e) => RecordLookup::Failed(e.to_string()),
    }
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
