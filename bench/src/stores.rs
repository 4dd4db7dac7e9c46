//! The stores the benchmarks run on: memory, the local file system, and Azure Blob (Azurite on
//! loopback, started by `scripts/emulators.sh run -- …`). Every run gets a fresh, empty root.

use object_store::azure::{MicrosoftAzure, MicrosoftAzureBuilder};
use object_store::local::LocalFileSystem;
use object_store::prefix::PrefixStore;
use object_store::ObjectStore;
use pickup::store::{ListOrder, Store};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Memory,
    File,
    Azure,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Memory => "memory",
            Kind::File => "file",
            Kind::Azure => "azurite",
        }
    }
    pub fn all() -> [Kind; 3] {
        [Kind::Memory, Kind::File, Kind::Azure]
    }
}

/// Where Azurite is, from the variables `scripts/emulators.sh run` exports.
#[derive(Debug, Clone)]
pub struct AzureConf {
    pub container: String,
    pub account: String,
    pub key: String,
}

/// The Azure emulator's settings, or why the Azure runs are skipped.
pub fn azure_conf() -> Result<AzureConf, String> {
    let var = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
    let Some(url) = var("PICKUP_TEST_AZURE_URL") else {
        return Err("PICKUP_TEST_AZURE_URL is not set: run under `scripts/emulators.sh run -- …` to include Azurite".into());
    };
    let Some(endpoint) = var("AZURITE_BLOB_STORAGE_URL") else {
        return Err("AZURITE_BLOB_STORAGE_URL is not set: run under `scripts/emulators.sh run -- …` to include Azurite".into());
    };
    // Loopback only: this benchmark never talks to a real cloud.
    let host = endpoint
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split(['/', ':']).next())
        .unwrap_or_default();
    if !matches!(host, "127.0.0.1" | "localhost" | "[::1]") {
        return Err(format!(
            "AZURITE_BLOB_STORAGE_URL={endpoint} is not a loopback address; refusing"
        ));
    }
    let container = url
        .strip_prefix("az://")
        .and_then(|r| r.split('/').next())
        .filter(|c| !c.is_empty())
        .ok_or_else(|| format!("PICKUP_TEST_AZURE_URL={url} is not az://container"))?
        .to_string();
    Ok(AzureConf {
        container,
        account: var("AZURE_STORAGE_ACCOUNT_NAME").unwrap_or_else(|| "devstoreaccount1".into()),
        // Azurite's published development key (a dummy credential, not a secret).
        key: var("AZURE_STORAGE_ACCOUNT_KEY").unwrap_or_else(|| {
            "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==".into()
        }),
    })
}

/// One fresh root on one backend.
pub struct Root {
    pub store: Store,
    /// The bare store under `store`: for the floor (the store's own work, without Pickup) and
    /// the shared-list designs, which are not Pickup's.
    raw: Arc<dyn ObjectStore>,
    /// The Azure client itself and the root's prefix, for paginated listings.
    pub azure: Option<(Arc<MicrosoftAzure>, String)>,
    _dir: Option<tempfile::TempDir>,
}

impl Root {
    pub fn inner(&self) -> Arc<dyn ObjectStore> {
        self.raw.clone()
    }
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
            let raw: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
            Ok(Root {
                store: Store::wrap(raw.clone(), ListOrder::Sorted, "memory://"),
                raw,
                azure: None,
                _dir: None,
            })
        }
        Kind::File => {
            let dir = tempfile::Builder::new()
                .prefix(&format!("pickup-bench-{label}-"))
                .tempdir()?;
            let raw: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir.path())?);
            Ok(Root {
                store: Store::wrap(
                    raw.clone(),
                    ListOrder::Unsorted,
                    &format!("file://{}", dir.path().display()),
                ),
                raw,
                azure: None,
                _dir: Some(dir),
            })
        }
        Kind::Azure => {
            let conf = azure_conf().map_err(anyhow::Error::msg)?;
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
            let inner: Arc<dyn ObjectStore> =
                Arc::new(PrefixStore::new(az.clone(), prefix.as_str()));
            // Pickup lists Azure in pages sized to the read, as `Store::open` sets it up.
            let store = Store::wrap(
                inner.clone(),
                ListOrder::Sorted,
                &format!("az://{}/{prefix}", conf.container),
            )
            .with_pages(az.clone(), &object_store::path::Path::from(prefix.as_str()));
            Ok(Root {
                store,
                raw: inner,
                azure: Some((az, prefix)),
                _dir: None,
            })
        }
    }
}

/// Whether this backend can be used in this run (Azure needs the emulator's variables).
pub fn available(kind: Kind) -> Result<(), String> {
    match kind {
        Kind::Azure => azure_conf().map(|_| ()),
        _ => Ok(()),
    }
}
