//! Opening the object store a `PICKUP_STORE` URL names.
//!
//! `file://PATH` (relative paths allowed: `file://./data`), `memory://`, `s3://bucket/prefix`,
//! `gs://bucket/prefix`, `az://container/prefix`. Cloud options come from the usual
//! `AWS_*`, `GOOGLE_*` and `AZURE_*` environment variables, parsed by object_store itself.

use super::{ListOrder, Store};
use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::list::PaginatedListStore;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::prefix::PrefixStore;
use object_store::{ObjectStore, ObjectStoreScheme as Scheme};
use std::sync::Arc;
use thiserror::Error;

#[derive(Debug, Error)]
pub(crate) enum StoreUrlError {
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

/// Whether the store behind a URL lists in key order. S3 general-purpose buckets, GCS, Azure
/// and memory do; S3 Express directory buckets (`…--x-s3`) and HTTP/WebDAV servers do not.
pub(super) fn listing_order(url: &url::Url) -> ListOrder {
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

/// A cloud store built as `parse_url_opts` builds it, but kept as its own type, so that its
/// paginated listing (which `dyn ObjectStore` hides) stays reachable. The options a builder
/// knows (by their environment names, any case) are applied; the rest are skipped, as
/// `parse_url_opts` does.
macro_rules! configured {
    ($builder:ty, $url:expr, $options:expr) => {{
        $options.iter().fold(
            <$builder>::new().with_url($url.to_string()),
            |builder, (key, value)| match key.to_ascii_lowercase().parse() {
                Ok(k) => builder.with_config(k, value.clone()),
                Err(_) => builder,
            },
        )
    }};
}

/// A cloud's paginated listing, and the most keys one of its pages holds.
type Pages = (Arc<dyn PaginatedListStore>, usize);

impl Store {
    /// Open the store a `PICKUP_STORE` URL names, with the cloud's options from the
    /// environment (`AWS_*`, `GOOGLE_*`, `AZURE_*`), `given` options winning over those.
    pub(crate) fn open_overriding(
        url: &str,
        given: &[(String, String)],
    ) -> Result<Self, StoreUrlError> {
        let mut options: Vec<(String, String)> = std::env::vars()
            .filter(|(k, _)| {
                k.starts_with("AWS_") || k.starts_with("GOOGLE_") || k.starts_with("AZURE_")
            })
            .filter(|(k, _)| !given.iter().any(|(g, _)| g.eq_ignore_ascii_case(k)))
            .collect();
        options.extend(given.iter().cloned());
        Self::open_with(url, options)
    }

    /// [`Store::open`] with the backend's options given (names as the environment spells them).
    pub(crate) fn open_with(
        url: &str,
        options: Vec<(String, String)>,
    ) -> Result<Self, StoreUrlError> {
        if let Some(path) = url.strip_prefix("file://") {
            return Self::open_dir(url, path);
        }
        let parsed = url::Url::parse(url).map_err(|_| StoreUrlError::NotAUrl(url.into()))?;
        let backend = |source: object_store::Error| StoreUrlError::Backend {
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
        let (scheme, prefix) = Scheme::parse(&parsed).map_err(|e| backend(e.into()))?;
        let prefix = Path::parse(prefix).map_err(|e| backend(e.into()))?;
        // The three clouds list in pages whose size Pickup chooses, up to each one's most (a
        // listing of everything asks for that: 1,000 keys a page on S3 and GCS, 5,000 on Azure);
        // everything else lists through `ObjectStore::list`.
        let (inner, pages): (Arc<dyn ObjectStore>, Option<Pages>) = match scheme {
            Scheme::AmazonS3 => {
                let s = Arc::new(
                    configured!(AmazonS3Builder, parsed, options)
                        .build()
                        .map_err(backend)?,
                );
                (s.clone(), Some((s, 1_000)))
            }
            Scheme::GoogleCloudStorage => {
                let s = Arc::new(
                    configured!(GoogleCloudStorageBuilder, parsed, options)
                        .build()
                        .map_err(backend)?,
                );
                (s.clone(), Some((s, 1_000)))
            }
            Scheme::MicrosoftAzure => {
                let s = Arc::new(
                    configured!(MicrosoftAzureBuilder, parsed, options)
                        .build()
                        .map_err(backend)?,
                );
                (s.clone(), Some((s, 5_000)))
            }
            _ => {
                let (store, _) = object_store::parse_url_opts(&parsed, options).map_err(backend)?;
                (Arc::from(store), None)
            }
        };
        let inner: Arc<dyn ObjectStore> = if prefix.as_ref().is_empty() {
            inner
        } else {
            Arc::new(PrefixStore::new(inner, prefix.clone()))
        };
        let store = Store::wrap(inner, order, url);
        Ok(match pages {
            Some((pages, most)) => store.with_pages(pages, &prefix, most),
            None => store,
        })
    }

    /// A store in memory, empty, listing in key order: `url` names it in logs.
    pub(crate) fn memory(url: &str) -> Self {
        Store::wrap(Arc::new(InMemory::new()), ListOrder::Sorted, url)
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
        let order = |url: &str| Store::open_with(url, opts(&[])).unwrap().order();
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

    /// A listing of everything (a reconcile's, a sweep's) asks each cloud for its fullest
    /// pages: Azure's hold 5,000 keys, and pages of S3's 1,000 there made a workspace of 1,000
    /// to 5,000 item keys cost several LIST requests a reconcile where one does.
    #[test]
    fn the_clouds_list_in_pages_as_full_as_each_allows_and_the_rest_do_not() {
        let azure = [
            ("AZURE_STORAGE_ACCOUNT_NAME", "devstoreaccount1"),
            ("AZURE_STORAGE_ACCOUNT_KEY", "a2V5"),
        ];
        let most = |url: &str| Store::open_with(url, opts(&azure)).unwrap().page_most();
        assert_eq!(most("s3://bucket/prefix"), Some(1_000));
        assert_eq!(most("az://container/prefix"), Some(5_000));
        assert_eq!(most("memory://"), None);
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(most(&format!("file://{}", dir.path().display())), None);
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
