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
use object_store::{GetResult, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use std::sync::Arc;
use std::time::Duration;
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
    /// How writes are retried after a transient fault.
    pub retry: Retry,
}

/// Bounded, jittered exponential back-off for writes that failed with a transient fault (a
/// dropped connection, a timeout, a 5xx). object_store retries only idempotent requests itself;
/// a create-only put is not one, so Pickup retries it here and settles the ambiguous case (the
/// store applied it, the answer was lost) by reading the key back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// Tries after the first one.
    pub retries: usize,
    pub min_delay: Duration,
    pub max_delay: Duration,
}

impl Default for Retry {
    fn default() -> Self {
        Retry {
            retries: 6,
            min_delay: Duration::from_millis(50),
            max_delay: Duration::from_secs(2),
        }
    }
}

impl Retry {
    fn delays(&self) -> impl Iterator<Item = Duration> {
        use backon::BackoffBuilder;
        backon::ExponentialBuilder::default()
            .with_min_delay(self.min_delay)
            .with_max_delay(self.max_delay)
            .with_max_times(self.retries)
            .with_jitter()
            .build()
    }
}

/// What the store keeps to tell one version of an object from another: an ETag and, on stores
/// that have them (GCS generations, S3 version ids), a version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Version {
    pub e_tag: Option<String>,
    pub version: Option<String>,
}

impl Version {
    fn of(got: &GetResult) -> Self {
        Version {
            e_tag: got.meta.e_tag.clone(),
            version: got.meta.version.clone(),
        }
    }
}

/// The validator Pickup hands out as an item's `ETag` and takes back in `If-Match`: whatever
/// the backend needs for a conditional update. S3 and Azure compare ETags; GCS compares the
/// object's generation (object_store's `version`), which an ETag alone does not carry. A
/// version without one is handed out as the store's ETag, unchanged; with one, both travel in
/// one opaque token: `"v1.<ETag>.<version>"`, each part base64url-encoded.
impl Version {
    const TAG: &'static str = "\"v1.";

    /// The `ETag` header value, if the store gave anything to compare.
    pub fn validator(&self) -> Option<String> {
        use base64::Engine;
        let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        match (&self.e_tag, &self.version) {
            (e_tag, Some(version)) => Some(format!(
                "{}{}.{}\"",
                Self::TAG,
                b64(e_tag.as_deref().unwrap_or("")),
                b64(version)
            )),
            (Some(e_tag), None) => Some(e_tag.clone()),
            (None, None) => None,
        }
    }

    /// Read back an `If-Match` value: a token of ours, or an ETag as the store gave it.
    pub fn from_validator(value: &str) -> Result<Self, BadValidator> {
        use base64::Engine;
        let value = value.trim();
        if value.is_empty() || value == "*" || !value.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(BadValidator);
        }
        let Some(token) = value.strip_prefix(Self::TAG) else {
            return Ok(Version {
                e_tag: Some(value.to_string()),
                version: None,
            });
        };
        let decode = |s: &str| {
            let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(s)
                .map_err(|_| BadValidator)?;
            String::from_utf8(bytes).map_err(|_| BadValidator)
        };
        let (e_tag, version) = token
            .strip_suffix('"')
            .and_then(|t| t.split_once('.'))
            .ok_or(BadValidator)?;
        let e_tag = decode(e_tag)?;
        Ok(Version {
            e_tag: (!e_tag.is_empty()).then_some(e_tag),
            version: Some(decode(version)?),
        })
    }
}

/// An `If-Match` that is present but is not a validator this server handed out.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("If-Match must be the ETag a GET or PUT of this item answered, as it was given")]
pub struct BadValidator;

/// A name no other server's probe has: this process's id and a counter.
fn probe_name() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let host = std::process::id();
    format!(
        "{host}-{}-{}",
        N.fetch_add(1, Ordering::Relaxed),
        chrono::Utc::now().timestamp_nanos_opt().unwrap_or(0)
    )
}

/// A fault worth trying again: the store or the way to it failed, not the request. Errors with
/// a meaning (not found, exists, precondition, not implemented, denied) are answers, not faults.
pub fn is_transient(e: &object_store::Error) -> bool {
    matches!(
        e,
        object_store::Error::Generic { .. } | object_store::Error::JoinError { .. }
    )
}

/// Whether the store behind a URL lists in key order. S3 general-purpose buckets, GCS, Azure
/// and memory do; S3 Express directory buckets (`…--x-s3`) and HTTP/WebDAV servers do not.
fn listing_order(url: &url::Url) -> ListOrder {
    use object_store::ObjectStoreScheme as Scheme;
    // A directory bucket's name ends in `--x-s3`, in the host (virtual-hosted style, first
    // label) or in the first path segment.
    let first_segment = url.path_segments().and_then(|mut s| s.next());
    let directory_bucket = url
        .host_str()
        .and_then(|h| h.split('.').next())
        .into_iter()
        .chain(first_segment)
        .any(|name| name.ends_with("--x-s3"));
    match Scheme::parse(url) {
        Ok((Scheme::AmazonS3, _)) if directory_bucket => ListOrder::Unsorted,
        Ok((Scheme::Http, _)) | Err(_) => ListOrder::Unsorted,
        Ok(_) => ListOrder::Sorted,
    }
}

#[derive(Debug, Error)]
pub enum StoreUrlError {
    #[error("PICKUP_STORE {0:?}: AWS_CONDITIONAL_PUT=disabled, but registering an item needs create-only puts (If-None-Match): unset it or set it to etag")]
    NoCreateOnlyPut(String),
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
    /// A store around any `ObjectStore` (tests wrap theirs in fault injectors).
    pub fn wrap(inner: Arc<dyn ObjectStore>, order: ListOrder, url: &str) -> Self {
        Store {
            inner,
            order,
            url: url.into(),
            retry: Retry::default(),
        }
    }

    pub fn memory() -> Self {
        Self::wrap(
            Arc::new(object_store::memory::InMemory::new()),
            ListOrder::Sorted,
            "memory://",
        )
    }

    /// Write `bytes` at `path` with `mode`, retrying transient faults with back-off.
    ///
    /// A retry of a create-only or conditional put that meets `AlreadyExists` / `Precondition`
    /// may be meeting its own earlier try, applied by the store after the answer was lost: the
    /// key is read back, and if it holds exactly these bytes the write is ours and succeeded.
    /// Otherwise the conflict is real and returned as it came.
    pub async fn put(
        &self,
        path: &Path,
        bytes: bytes::Bytes,
        mode: PutMode,
    ) -> object_store::Result<Version> {
        let mut delays = self.retry.delays();
        let mut ambiguous = false;
        loop {
            let opts = PutOptions {
                mode: mode.clone(),
                ..Default::default()
            };
            let err = match self
                .inner
                .put_opts(path, PutPayload::from_bytes(bytes.clone()), opts)
                .await
            {
                Ok(r) => {
                    return Ok(Version {
                        e_tag: r.e_tag,
                        version: r.version,
                    })
                }
                Err(
                    e @ (object_store::Error::AlreadyExists { .. }
                    | object_store::Error::Precondition { .. }),
                ) if ambiguous => match self.read_back(path, &bytes).await {
                    Ok(Some(v)) => return Ok(v),
                    Ok(None) => return Err(e),
                    Err(read_err) => read_err,
                },
                Err(e) => e,
            };
            if !is_transient(&err) {
                return Err(err);
            }
            let Some(delay) = delays.next() else {
                return Err(err);
            };
            tracing::warn!(%path, error = %err, ?delay, "store write failed; retrying");
            ambiguous = true;
            tokio::time::sleep(delay).await;
        }
    }

    /// After an ambiguous write: the object's version if it holds exactly `bytes`.
    async fn read_back(&self, path: &Path, bytes: &[u8]) -> object_store::Result<Option<Version>> {
        match self.inner.get(path).await {
            Ok(got) => {
                let version = Version::of(&got);
                Ok((got.bytes().await?.as_ref() == bytes).then_some(version))
            }
            // Gone again (removed in between): not ours to claim.
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Delete a key, retrying transient faults; a key already gone is fine.
    pub async fn delete(&self, path: &Path) -> object_store::Result<()> {
        let mut delays = self.retry.delays();
        loop {
            match self.inner.delete(path).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => return Ok(()),
                Err(e) if is_transient(&e) => match delays.next() {
                    Some(delay) => tokio::time::sleep(delay).await,
                    None => return Err(e),
                },
                Err(e) => return Err(e),
            }
        }
    }

    /// The store's own clock, in ms since the epoch: an empty probe is written, its
    /// last-modified time read back, and the probe deleted. Every server sees the same clock
    /// here, whatever its own says.
    pub async fn now_ms(&self) -> object_store::Result<u64> {
        let probe = Path::from(format!("clock/{}", probe_name()));
        self.inner.put(&probe, PutPayload::new()).await?;
        let head = self.inner.head(&probe).await;
        self.delete(&probe).await?;
        Ok(head?.last_modified.timestamp_millis().max(0) as u64)
    }

    /// Read a key with its version, or `None` if it does not exist.
    pub async fn get(&self, path: &Path) -> object_store::Result<Option<(bytes::Bytes, Version)>> {
        match self.inner.get(path).await {
            Ok(got) => {
                let version = Version::of(&got);
                Ok(Some((got.bytes().await?, version)))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Open the store a `PICKUP_STORE` URL names, with the cloud's options from the
    /// environment (`AWS_*`, `GOOGLE_*`, `AZURE_*`).
    pub fn open(url: &str) -> Result<Self, StoreUrlError> {
        let options = std::env::vars().filter(|(k, _)| {
            k.starts_with("AWS_") || k.starts_with("GOOGLE_") || k.starts_with("AZURE_")
        });
        Self::open_with(url, options.collect())
    }

    /// [`Store::open`] with the backend's options given (names as the environment spells them).
    pub fn open_with(url: &str, options: Vec<(String, String)>) -> Result<Self, StoreUrlError> {
        if let Some(path) = url.strip_prefix("file://") {
            return Self::open_dir(url, path);
        }
        let parsed = url::Url::parse(url).map_err(|_| StoreUrlError::NotAUrl(url.into()))?;
        let backend = |source| StoreUrlError::Backend {
            url: url.into(),
            source,
        };
        // Registration is a create-only put: an S3 store told not to make conditional puts
        // would refuse every registration, so refuse to start instead.
        let no_conditional_put = options.iter().any(|(k, v)| {
            k.eq_ignore_ascii_case("AWS_CONDITIONAL_PUT")
                && v.trim().eq_ignore_ascii_case("disabled")
        });
        if parsed.scheme() == "s3" && no_conditional_put {
            return Err(StoreUrlError::NoCreateOnlyPut(url.into()));
        }
        let order = listing_order(&parsed);
        let (store, prefix) = object_store::parse_url_opts(&parsed, options).map_err(backend)?;
        let inner: Arc<dyn ObjectStore> = if prefix.as_ref().is_empty() {
            Arc::from(store)
        } else {
            Arc::new(PrefixStore::new(store, prefix))
        };
        Ok(Store::wrap(inner, order, url))
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
        Ok(Store::wrap(Arc::new(fs), ListOrder::Unsorted, url))
    }
}

/// One key Pickup writes, typed: the only way the read path, the janitor and `apply` name what
/// they delete. Every part was validated before it got here.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Key {
    /// `markers/{ws}/{id}`: the item is listed.
    Marker(Workspace, ItemId),
    /// `items/{ws}/{id}.json`: the item's record.
    Record(Workspace, ItemId),
    /// `dismissed/{ws}/{user}/{id}`: this viewer dismissed the item.
    Dismissal(Workspace, UserId, ItemId),
    /// `owners/{ws}/{user}/{id}`: the item is listed among its owner's (the "Mine" filter).
    OwnerMarker(Workspace, UserId, ItemId),
}

impl Key {
    pub fn path(&self) -> Path {
        match self {
            Key::Marker(ws, id) => keys::marker(ws, id),
            Key::Record(ws, id) => keys::item(ws, id),
            Key::Dismissal(ws, user, id) => keys::dismissal(ws, user, id),
            Key::OwnerMarker(ws, user, id) => keys::owner_marker(ws, user, id),
        }
    }

    pub fn ws(&self) -> &Workspace {
        match self {
            Key::Marker(ws, _)
            | Key::Record(ws, _)
            | Key::Dismissal(ws, _, _)
            | Key::OwnerMarker(ws, _, _) => ws,
        }
    }

    pub fn id(&self) -> &ItemId {
        match self {
            Key::Marker(_, id)
            | Key::Record(_, id)
            | Key::Dismissal(_, _, id)
            | Key::OwnerMarker(_, _, id) => id,
        }
    }

    /// What kind of key it is, for counts in logs and reports.
    pub fn kind(&self) -> KeyKind {
        match self {
            Key::Marker(..) => KeyKind::Marker,
            Key::Record(..) => KeyKind::Record,
            Key::Dismissal(..) => KeyKind::Dismissal,
            Key::OwnerMarker(..) => KeyKind::OwnerMarker,
        }
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.path())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyKind {
    Marker,
    Record,
    Dismissal,
    OwnerMarker,
}

impl KeyKind {
    pub fn plural(self) -> &'static str {
        match self {
            KeyKind::Marker => "markers",
            KeyKind::Record => "records",
            KeyKind::Dismissal => "dismissals",
            KeyKind::OwnerMarker => "owner markers",
        }
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
    pub fn items(ws: &Workspace) -> Path {
        Path::from(format!("items/{ws}"))
    }
    pub fn owner_markers(ws: &Workspace, user: &UserId) -> Path {
        Path::from(format!("owners/{ws}/{user}"))
    }
    pub fn owner_marker(ws: &Workspace, user: &UserId, id: &ItemId) -> Path {
        Path::from(format!("owners/{ws}/{user}/{id}"))
    }
    pub fn all_owner_markers(ws: &Workspace) -> Path {
        Path::from(format!("owners/{ws}"))
    }
    /// The top-level prefixes under which a workspace can have keys.
    pub const ROOTS: [&str; 4] = ["markers", "items", "dismissed", "owners"];
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = [
            ("AWS_ACCESS_KEY_ID", "test"),
            ("AWS_SECRET_ACCESS_KEY", "test"),
            ("AWS_REGION", "us-east-1"),
            ("AWS_ENDPOINT", "http://127.0.0.1:9"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        v.extend(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        v
    }

    #[test]
    fn only_stores_that_list_in_key_order_are_marked_sorted() {
        let order = |url: &str| Store::open_with(url, opts(&[])).unwrap().order;
        assert_eq!(order("s3://bucket/prefix"), ListOrder::Sorted);
        assert_eq!(order("memory://"), ListOrder::Sorted);
        assert_eq!(order("s3://logs--usw2-az1--x-s3/p"), ListOrder::Unsorted);
        let of = |url: &str| listing_order(&url::Url::parse(url).unwrap());
        assert_eq!(of("http://127.0.0.1:9/dav"), ListOrder::Unsorted);
        assert_eq!(
            of("https://logs--usw2-az1--x-s3.s3express-usw2-az1.us-west-2.amazonaws.com/p"),
            ListOrder::Unsorted
        );
        assert_eq!(
            of("https://bucket.s3.us-west-2.amazonaws.com/p"),
            ListOrder::Sorted
        );
        assert_eq!(
            of("https://acct.blob.core.windows.net/c/p"),
            ListOrder::Sorted
        );
    }

    #[test]
    fn validators_carry_what_each_backend_compares() {
        let etag_only = Version {
            e_tag: Some("\"abc\"".into()),
            version: None,
        };
        assert_eq!(etag_only.validator().as_deref(), Some("\"abc\""));
        assert_eq!(Version::from_validator("\"abc\"").unwrap(), etag_only);
        for v in [
            Version {
                e_tag: Some("\"abc\"".into()),
                version: Some("1712345678901234".into()),
            },
            Version {
                e_tag: None,
                version: Some("7".into()),
            },
        ] {
            let token = v.validator().unwrap();
            assert!(token.bytes().all(|b| b.is_ascii_graphic()), "{token}");
            assert_eq!(Version::from_validator(&token).unwrap(), v);
        }
        for bad in ["", " ", "*", "\"v1.!!.x\"", "\"v1.YWJj\"", "caf\u{e9}"] {
            assert_eq!(Version::from_validator(bad), Err(BadValidator), "{bad:?}");
        }
    }

    #[test]
    fn s3_without_conditional_puts_is_refused_at_start() {
        let res = Store::open_with(
            "s3://bucket/p",
            opts(&[("AWS_CONDITIONAL_PUT", "disabled")]),
        );
        assert!(matches!(res, Err(StoreUrlError::NoCreateOnlyPut(_))));
        assert!(
            Store::open_with("s3://bucket/p", opts(&[("AWS_CONDITIONAL_PUT", "etag")])).is_ok()
        );
    }
}
