//! The stores the benchmarks run on: memory, memory with a simulated network round trip per
//! request (crate::latency), the local file system, Azure Blob (Azurite) and S3 (moto), the
//! emulators on loopback as started by `scripts/emulators.sh run -- …`. Every run gets a fresh,
//! empty root.

use crate::latency::{self, Latency};
use object_store::aws::{AmazonS3Builder, S3ConditionalPut};
use object_store::azure::{MicrosoftAzure, MicrosoftAzureBuilder};
use object_store::local::LocalFileSystem;
use object_store::prefix::PrefixStore;
use object_store::ObjectStore;
use pickup::index::{Index, Limits, SystemClock};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A store the benchmarks run on. Serialised as its name, which is what the JSON results and
/// the report call it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Kind {
    #[serde(rename = "memory")]
    Memory,
    /// In memory, every request delayed by [`latency::DEFAULT_ROUND_TRIP`].
    #[serde(rename = "memory+20ms")]
    Latency,
    #[serde(rename = "file")]
    File,
    #[serde(rename = "azurite")]
    Azure,
    #[serde(rename = "moto")]
    S3,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Memory => "memory",
            Kind::Latency => "memory+20ms",
            Kind::File => "file",
            Kind::Azure => "azurite",
            Kind::S3 => "moto",
        }
    }

    /// What the store is, for the report: the emulators are named as what they are.
    pub fn description(self) -> &'static str {
        match self {
            Kind::Memory => "object_store's `InMemory`, in process",
            Kind::Latency => "`InMemory` with a fixed 20 ms round trip per request and per 1,000-key listing page, as a cloud store's network would add (bench/src/latency.rs)",
            Kind::File => "the local file system (`LocalFileSystem`)",
            Kind::Azure => "Azurite, the Azure Blob emulator: one Node.js process on the benchmark's own cores, so bound by their CPU, not by round trips",
            Kind::S3 => "moto, the S3 emulator: one Python process on the benchmark's own cores, so bound by their CPU, not by round trips",
        }
    }

    /// The round trip every request is given, on a store that simulates one.
    pub fn round_trip(self) -> Option<std::time::Duration> {
        match self {
            Kind::Latency => Some(latency::Network::default().round_trip),
            Kind::Memory | Kind::File | Kind::Azure | Kind::S3 => None,
        }
    }

    /// Whether a listing comes back in key order, so a reader can stop early (as Pickup's own
    /// opening of each store finds).
    pub fn lists_in_key_order(self) -> bool {
        !matches!(self, Kind::File)
    }

    /// An emulator process sharing the benchmark's CPUs: its throughput measures the emulator.
    pub fn is_emulator(self) -> bool {
        matches!(self, Kind::Azure | Kind::S3)
    }

    pub fn all() -> [Kind; 5] {
        [
            Kind::Memory,
            Kind::Latency,
            Kind::File,
            Kind::Azure,
            Kind::S3,
        ]
    }

    /// A name on the command line: the store's name, or its service's.
    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "azure" => Some(Kind::Azure),
            "s3" => Some(Kind::S3),
            "latency" => Some(Kind::Latency),
            _ => Kind::all().into_iter().find(|k| k.name() == s),
        }
    }
}

/// Why an emulator's store cannot be used in this run.
#[derive(Debug, thiserror::Error)]
pub enum Unavailable {
    #[error("{0} is not set: run under `scripts/emulators.sh run -- …` to include it")]
    NotSet(&'static str),
    #[error("{var}={value} is not a loopback address; refusing (this benchmark never talks to a real cloud)")]
    NotLoopback { var: &'static str, value: String },
    #[error("{var}={value} is not {expected}")]
    Malformed {
        var: &'static str,
        value: String,
        expected: &'static str,
    },
}

fn var(name: &'static str) -> Result<String, Unavailable> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .ok_or(Unavailable::NotSet(name))
}

/// `http://127.0.0.1:PORT`-style endpoints only.
fn loopback(name: &'static str, endpoint: String) -> Result<String, Unavailable> {
    let host = endpoint
        .split("://")
        .nth(1)
        .and_then(|rest| {
            if rest.starts_with('[') {
                rest.split_inclusive(']').next()
            } else {
                rest.split(['/', ':']).next()
            }
        })
        .unwrap_or_default();
    if matches!(host, "127.0.0.1" | "localhost" | "[::1]") {
        Ok(endpoint)
    } else {
        Err(Unavailable::NotLoopback {
            var: name,
            value: endpoint,
        })
    }
}

/// The bucket or container of `scheme://name[/…]`.
fn bucket_of(name: &'static str, url: &str, scheme: &str) -> Result<String, Unavailable> {
    url.strip_prefix(scheme)
        .and_then(|r| r.split('/').next())
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .ok_or_else(|| Unavailable::Malformed {
            var: name,
            value: url.into(),
            expected: if scheme == "s3://" {
                "s3://bucket"
            } else {
                "az://container"
            },
        })
}

/// Where Azurite is, from the variables `scripts/emulators.sh run` exports.
#[derive(Debug, Clone)]
pub struct AzureConf {
    pub container: String,
    pub account: String,
    pub key: String,
}

/// The Azure emulator's settings, or why the Azure runs are skipped.
pub fn azure_conf() -> Result<AzureConf, Unavailable> {
    let url = var("PICKUP_TEST_AZURE_URL")?;
    // object_store reads the endpoint itself in emulator mode; it must be loopback.
    loopback("AZURITE_BLOB_STORAGE_URL", var("AZURITE_BLOB_STORAGE_URL")?)?;
    Ok(AzureConf {
        container: bucket_of("PICKUP_TEST_AZURE_URL", &url, "az://")?,
        account: var("AZURE_STORAGE_ACCOUNT_NAME").unwrap_or_else(|_| "devstoreaccount1".into()),
        // Azurite's published development key (a dummy credential, not a secret).
        key: var("AZURE_STORAGE_ACCOUNT_KEY").unwrap_or_else(|_| {
            "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==".into()
        }),
    })
}

/// Where moto is, from the variables `scripts/emulators.sh run` exports.
#[derive(Debug, Clone)]
pub struct S3Conf {
    pub bucket: String,
    pub endpoint: String,
    pub region: String,
    pub key_id: String,
    pub secret: String,
}

/// The S3 emulator's settings, or why the S3 runs are skipped. Nothing is left for
/// object_store to find on its own (no profile, no metadata service).
pub fn s3_conf() -> Result<S3Conf, Unavailable> {
    let url = var("PICKUP_TEST_S3_URL")?;
    Ok(S3Conf {
        bucket: bucket_of("PICKUP_TEST_S3_URL", &url, "s3://")?,
        endpoint: loopback("AWS_ENDPOINT", var("AWS_ENDPOINT")?)?,
        region: var("AWS_REGION").unwrap_or_else(|_| "us-east-1".into()),
        // moto accepts any credentials; the script exports dummies.
        key_id: var("AWS_ACCESS_KEY_ID")?,
        secret: var("AWS_SECRET_ACCESS_KEY")?,
    })
}

/// One fresh root on one backend.
pub struct Root {
    pub kind: Kind,
    /// Pickup's index on the root, opened from its URL as `pickup serve --store URL` opens it
    /// (memory: over `raw` itself).
    index: Index,
    /// The bare store under the index: for the seed and the floor (the store's own work,
    /// without Pickup) and the shared-list designs, which are not Pickup's.
    raw: Arc<dyn ObjectStore>,
    /// The Azure client itself and the root's prefix, for paginated listings.
    pub azure: Option<(Arc<MicrosoftAzure>, String)>,
    _dir: Option<tempfile::TempDir>,
}

impl Root {
    pub fn inner(&self) -> Arc<dyn ObjectStore> {
        self.raw.clone()
    }

    /// Pickup's index on this root, judging by `limits`.
    pub fn index(&self, limits: Limits) -> Index {
        self.index.clone().with_limits(limits)
    }
}

/// Pickup's index on the store `url` names, as `pickup serve --store URL` opens it.
fn index_at(url: &str) -> anyhow::Result<Index> {
    Ok(Index::open(
        url,
        Limits::default(),
        8,
        Arc::new(SystemClock),
    )?)
}

/// Pickup's index on memory, with `layer` between it and the store; and what the layer made,
/// which is the bare store the benchmarks reach straight.
fn on_memory(
    layer: impl FnOnce(Arc<dyn ObjectStore>) -> Arc<dyn ObjectStore>,
) -> anyhow::Result<(Index, Arc<dyn ObjectStore>)> {
    let mut raw = None;
    let index = index_at("memory://")?.through(|inner| {
        let layered = layer(inner);
        raw = Some(layered.clone());
        layered
    });
    Ok((index, raw.expect("through calls its layer")))
}

fn unique(label: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    format!(
        "{label}-{:x}-{}-{}",
        nanos,
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

pub fn open(kind: Kind, label: &str) -> anyhow::Result<Root> {
    match kind {
        Kind::Memory => {
            let (index, raw) = on_memory(|inner| inner)?;
            Ok(Root::bare(kind, index, raw))
        }
        Kind::Latency => {
            let (index, raw) =
                on_memory(|inner| Arc::new(Latency::new(inner, latency::Network::default())))?;
            Ok(Root::bare(kind, index, raw))
        }
        Kind::File => {
            let dir = tempfile::Builder::new()
                .prefix(&format!("pickup-bench-{label}-"))
                .tempdir()?;
            let raw: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir.path())?);
            let index = index_at(&format!("file://{}", dir.path().display()))?;
            Ok(Root {
                _dir: Some(dir),
                ..Root::bare(kind, index, raw)
            })
        }
        Kind::Azure => open_azure(label),
        Kind::S3 => open_s3(label),
    }
}

impl Root {
    fn bare(kind: Kind, index: Index, raw: Arc<dyn ObjectStore>) -> Root {
        Root {
            kind,
            index,
            raw,
            azure: None,
            _dir: None,
        }
    }
}

fn open_azure(label: &str) -> anyhow::Result<Root> {
    let conf = azure_conf()?;
    // Explicit everything: the emulator's account and key, the container, and its
    // endpoint, which object_store reads in emulator mode from AZURITE_BLOB_STORAGE_URL
    // (checked above to be loopback).
    let az = MicrosoftAzureBuilder::new()
        .with_use_emulator(true)
        .with_allow_http(true)
        .with_account(&conf.account)
        .with_access_key(&conf.key)
        .with_container_name(&conf.container)
        .build()?;
    let az = Arc::new(az);
    let prefix = unique(label);
    let inner: Arc<dyn ObjectStore> = Arc::new(PrefixStore::new(az.clone(), prefix.as_str()));
    // Pickup lists Azure in pages sized to the read, as it opens the store from its URL.
    let index = index_at(&format!("az://{}/{prefix}", conf.container))?;
    Ok(Root {
        kind: Kind::Azure,
        index,
        raw: inner,
        azure: Some((az, prefix)),
        _dir: None,
    })
}

fn open_s3(label: &str) -> anyhow::Result<Root> {
    let conf = s3_conf()?;
    // Explicit everything, as for Azurite: a loopback endpoint, path-style requests,
    // dummy keys, and the If-Match / If-None-Match puts moto implements (which the
    // compare-and-set list needs).
    let s3 = AmazonS3Builder::new()
        .with_endpoint(&conf.endpoint)
        .with_allow_http(true)
        .with_virtual_hosted_style_request(false)
        .with_region(&conf.region)
        .with_bucket_name(&conf.bucket)
        .with_access_key_id(&conf.key_id)
        .with_secret_access_key(&conf.secret)
        .with_conditional_put(S3ConditionalPut::ETagMatch)
        .build()?;
    let s3 = Arc::new(s3);
    let prefix = unique(label);
    let inner: Arc<dyn ObjectStore> = Arc::new(PrefixStore::new(s3.clone(), prefix.as_str()));
    // Pickup lists S3 in pages sized to the read, as it opens the store from its URL.
    let index = index_at(&format!("s3://{}/{prefix}", conf.bucket))?;
    Ok(Root {
        kind: Kind::S3,
        index,
        raw: inner,
        azure: None,
        _dir: None,
    })
}

/// Whether this backend can be used in this run (the emulators need their variables), and if
/// not, why, as the run's skip note says it.
pub fn available(kind: Kind) -> Result<(), String> {
    let conf = match kind {
        Kind::Azure => azure_conf().map(|_| ()),
        Kind::S3 => s3_conf().map(|_| ()),
        Kind::Memory | Kind::Latency | Kind::File => Ok(()),
    };
    conf.map_err(|e| e.to_string())
}
