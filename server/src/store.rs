//! Opening the object store a `PICKUP_STORE` URL names, and the keys Pickup uses in it.
//!
//! `file://PATH` (relative paths allowed: `file://./data`), `memory://`, `s3://bucket/prefix`,
//! `gs://bucket/prefix`, `az://container/prefix`. Cloud options come from the usual
//! `AWS_*`, `GOOGLE_*` and `AZURE_*` environment variables, parsed by object_store itself.

use crate::id::ItemId;
use crate::names::{UserId, Workspace};
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::prefix::PrefixStore;
use object_store::ObjectStore;
use std::sync::Arc;
use thiserror::Error;

/// Whether a listing comes back in ascending key order, which lets the reader stop early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListOrder {
    Sorted,
    Unsorted,
}

#[derive(Clone)]
pub struct Store {
    pub inner: Arc<dyn ObjectStore>,
    pub order: ListOrder,
    /// The URL it was opened from, for logs and `/readyz`.
    pub url: String,
}

#[derive(Debug, Error)]
pub enum StoreUrlError {
    #[error("PICKUP_STORE {0:?} is not a URL: use file://./data, memory://, s3://bucket/prefix, gs://bucket/prefix or az://container/prefix")]
    NotAUrl(String),
    #[error("PICKUP_STORE {url:?}: {source}")]
    Backend {
        url: String,
        #[source]
        source: object_store::Error,
    },
    #[error("PICKUP_STORE {url:?}: cannot create the directory: {source}")]
    Dir {
        url: String,
        #[source]
        source: std::io::Error,
    },
}

impl Store {
    pub fn memory() -> Self {
        Store {
            inner: Arc::new(object_store::memory::InMemory::new()),
            order: ListOrder::Sorted,
            url: "memory://".into(),
        }
    }

    pub fn open(url: &str) -> Result<Self, StoreUrlError> {
        if let Some(path) = url.strip_prefix("file://") {
            return Self::open_dir(url, path);
        }
        let parsed = url::Url::parse(url).map_err(|_| StoreUrlError::NotAUrl(url.into()))?;
        let backend = |source| StoreUrlError::Backend {
            url: url.into(),
            source,
        };
        let options = std::env::vars().filter(|(k, _)| {
            k.starts_with("AWS_") || k.starts_with("GOOGLE_") || k.starts_with("AZURE_")
        });
        let (store, prefix) = object_store::parse_url_opts(&parsed, options).map_err(backend)?;
        let inner: Arc<dyn ObjectStore> = if prefix.as_ref().is_empty() {
            Arc::from(store)
        } else {
            Arc::new(PrefixStore::new(store, prefix))
        };
        Ok(Store {
            inner,
            order: ListOrder::Sorted,
            url: url.into(),
        })
    }

    fn open_dir(url: &str, path: &str) -> Result<Self, StoreUrlError> {
        let dir = if path.is_empty() { "." } else { path };
        std::fs::create_dir_all(dir).map_err(|source| StoreUrlError::Dir {
            url: url.into(),
            source,
        })?;
        let fs =
            LocalFileSystem::new_with_prefix(dir).map_err(|source| StoreUrlError::Backend {
                url: url.into(),
                source,
            })?;
        Ok(Store {
            inner: Arc::new(fs),
            order: ListOrder::Unsorted,
            url: url.into(),
        })
    }
}

/// The keys of DESIGN.md. Every part was validated before it got here.
pub mod keys {
    use super::*;

    pub fn markers(ws: &Workspace) -> Path {
        Path::from(format!("markers/{ws}"))
    }
    pub fn marker(ws: &Workspace, id: &ItemId) -> Path {
        Path::from(format!("markers/{ws}/{id}"))
    }
    pub fn item(ws: &Workspace, id: &ItemId) -> Path {
        Path::from(format!("items/{ws}/{id}.json"))
    }
    pub fn dismissals(ws: &Workspace) -> Path {
        Path::from(format!("dismissed/{ws}"))
    }
    pub fn dismissals_of(ws: &Workspace, user: &UserId) -> Path {
        Path::from(format!("dismissed/{ws}/{user}"))
    }
    pub fn dismissal(ws: &Workspace, user: &UserId, id: &ItemId) -> Path {
        Path::from(format!("dismissed/{ws}/{user}/{id}"))
    }
    pub fn all_markers() -> Path {
        Path::from("markers")
    }
}
