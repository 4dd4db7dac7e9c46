//! The stores the scenario suite (`tests/scenarios/`) and `tests/scale_out.rs` run against,
//! opened the way a user configures them: `PICKUP_STORE`'s URL through
//! `pickup::index::Index::open`, with the cloud options object_store reads from the `AWS_*`,
//! `AZURE_*` and `GOOGLE_*` variables.
//!
//! Memory and the local file system always run. `scripts/emulators.sh run -- …`
//! (`make test-backends`) starts Azurite and moto on loopback and sets `PICKUP_TEST_AZURE_URL`
//! and `PICKUP_TEST_S3_URL` with their variables; GCS runs when `PICKUP_TEST_GCS_URL` is set (no
//! emulator works here: `PICKUP_TEST_GCS_SKIP` says why). A backend whose variable is absent is
//! reported as skipped, with the reason.
//!
//! Every caller gets a fresh root, `{base}/{label}-{random}` (memory: a fresh store), so runs
//! and tests never meet.

use pickup::index::{Index, ManualClock};
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The backends, in the order the suites run them.
pub const NAMES: [&str; 5] = ["memory", "file", "azure", "s3", "gcs"];

pub struct Backend {
    pub name: &'static str,
    /// `memory://`, `file:///tmp/…`, `az://container`, `s3://bucket`, `gs://bucket` (maybe with
    /// a prefix).
    pub base: String,
    /// Whether the store lists in key order (everything but the local file system).
    pub sorted: bool,
    /// Whether the store does compare-and-set updates (everything but the local file system).
    pub conditional: bool,
    _dir: Option<Arc<tempfile::TempDir>>,
}

/// A name nobody else uses: time, process and a counter, through a randomly keyed hash.
pub fn unique(label: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    h.write_u128(nanos);
    h.write_u32(std::process::id());
    h.write_u64(N.fetch_add(1, Ordering::SeqCst));
    format!("{label}-{:016x}", h.finish())
}

impl Backend {
    /// Whether two processes can share this backend (all but memory).
    pub fn shared(&self) -> bool {
        self.name != "memory"
    }

    /// A fresh root on this backend, as a `PICKUP_STORE` URL (memory: `memory://`, which every
    /// open makes a new, empty store of).
    pub fn fresh_url(&self, label: &str) -> String {
        if !self.shared() {
            return self.base.clone();
        }
        format!("{}/{}", self.base.trim_end_matches('/'), unique(label))
    }

    /// Whether `Index::open` lists this backend in pages sized to the read (the clouds'
    /// paginated listings, `src/index/store/open.rs`), not in one plain listing.
    pub fn lists_in_pages(&self) -> bool {
        matches!(self.name, "azure" | "s3" | "gcs")
    }

    /// An index on a fresh root, opened exactly as `pickup serve --store URL` opens it, telling
    /// the time by `clock`. (Whether it lists in key order, as [`Backend::sorted`] says, is a
    /// behaviour: `scenarios/listing.rs` checks it on every backend.)
    pub fn open(&self, label: &str, clock: &ManualClock) -> Index {
        super::index_at(&self.fresh_url(label), clock)
    }
}

/// Refuse anything but loopback endpoints unless the caller says a real cloud is meant: an
/// endpoint variable must be set and name 127.0.0.1 or localhost (Azurite's default,
/// `AZURE_STORAGE_USE_EMULATOR=true` without a URL, is 127.0.0.1:10000).
fn check_loopback(name: &str, vars: &[&str]) {
    if std::env::var("PICKUP_TEST_REMOTE").as_deref() == Ok("1") {
        return;
    }
    let mut named = 0;
    for var in vars {
        if let Ok(v) = std::env::var(var) {
            named += 1;
            let host = url::Url::parse(&v)
                .ok()
                .and_then(|u| u.host_str().map(str::to_string))
                .unwrap_or_default();
            assert!(
                host == "127.0.0.1" || host == "localhost" || host == "[::1]",
                "{name}: {var}={v} is not a loopback address; set PICKUP_TEST_REMOTE=1 to run against a real cloud"
            );
        }
    }
    let emulator = name == "azure"
        && std::env::var("AZURE_STORAGE_USE_EMULATOR").is_ok_and(|v| v == "true" || v == "1");
    assert!(
        named > 0 || emulator,
        "{name}: none of {vars:?} is set, so this would reach the real cloud; set one to a loopback emulator, or PICKUP_TEST_REMOTE=1"
    );
}

/// The backend called `name` if this run can use it; otherwise `None`, after printing why
/// `test` is skipped there.
pub fn backend(name: &str, test: &str) -> Option<Backend> {
    match backends_or_why().into_iter().find(|(n, _)| *n == name) {
        Some((_, Ok(b))) => Some(b),
        Some((_, Err(why))) => {
            println!("{test}: SKIPPED on backend {name}: {why}");
            None
        }
        None => panic!("{test}: no backend called {name}; there are {NAMES:?}"),
    }
}

/// Every backend this run can use, in a fixed order. Prints one line per skipped backend, once
/// per test binary (`test` names the first test that asked).
pub fn backends(test: &str) -> Vec<Backend> {
    static REPORTED: std::sync::Once = std::sync::Once::new();
    let mut report = false;
    REPORTED.call_once(|| report = true);
    let mut out = Vec::new();
    for (name, b) in backends_or_why() {
        match b {
            Ok(b) => out.push(b),
            Err(why) if report => {
                println!(
                    "backend {name} SKIPPED for every test of this file (seen by {test}): {why}"
                )
            }
            Err(_) => {}
        }
    }
    out
}

/// Each backend of [`NAMES`], or why this run cannot use it.
fn backends_or_why() -> Vec<(&'static str, Result<Backend, String>)> {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let mut out = vec![(
        "memory",
        Ok(Backend {
            name: "memory",
            base: "memory://".into(),
            sorted: true,
            conditional: true,
            _dir: None,
        }),
    )];
    out.push((
        "file",
        Ok(Backend {
            name: "file",
            base: format!("file://{}", dir.path().display()),
            sorted: false,
            conditional: false,
            _dir: Some(dir),
        }),
    ));
    let cloud: [(&'static str, &str, &[&str]); 3] = [
        (
            "azure",
            "PICKUP_TEST_AZURE_URL",
            &[
                "AZURITE_BLOB_STORAGE_URL",
                "AZURE_STORAGE_ENDPOINT",
                "AZURE_ENDPOINT",
            ],
        ),
        (
            "s3",
            "PICKUP_TEST_S3_URL",
            &["AWS_ENDPOINT", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"],
        ),
        ("gcs", "PICKUP_TEST_GCS_URL", &["GOOGLE_BASE_URL"]),
    ];
    for (name, var, endpoints) in cloud {
        match std::env::var(var) {
            Ok(base) if !base.is_empty() => {
                check_loopback(name, endpoints);
                out.push((
                    name,
                    Ok(Backend {
                        name,
                        base,
                        sorted: true,
                        conditional: true,
                        _dir: None,
                    }),
                ));
            }
            _ => {
                let why = match name {
                    "gcs" => std::env::var("PICKUP_TEST_GCS_SKIP")
                        .unwrap_or_else(|_| format!("{var} is not set")),
                    _ => format!(
                        "{var} is not set (run `make test-backends`, which starts the emulators)"
                    ),
                };
                out.push((name, Err(why)));
            }
        }
    }
    out
}
