//! Listing a scope a page at a time, in pages as small as the reader needs.
//!
//! object_store's `list` asks S3 and GCS for pages of up to 1,000 keys and Azure for up to
//! 5,000, so a read that needs 24 names would pay for a first page that grows with the
//! workspace. On those three, [`Paging`] uses `list_paginated` with `max_keys` set to what the
//! reader asks for, and follows the page token while it asks for more. Elsewhere (memory, the
//! local file system) it takes what it is asked for from the plain listing.

use super::error::Result;
use super::key::{Found, Scope};
use super::{ListOrder, Store};
use crate::index::{ItemId, Key, Version};
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::list::{PaginatedListOptions, PaginatedListStore};
use object_store::path::Path;
use object_store::ObjectMeta;
use std::sync::Arc;

/// A listing of one scope, read a page at a time. On a sorted store the keys come in key
/// order (newest item first); on others, in no order, and the caller sorts.
pub(crate) struct Paging {
    scope: Scope,
    /// Only keys of items older than this one (the cursor of "Show older").
    after: Option<ItemId>,
    source: Source,
    /// Keys seen so far, for the log line that reports a listing's cost.
    pub returned: usize,
}

enum Source {
    Paginated {
        store: Arc<dyn PaginatedListStore>,
        /// `{root}/{scope}/`: the raw prefix (a paginated listing adds no delimiter itself).
        prefix: String,
        /// The store's root, stripped from what it returns to get Pickup's paths.
        root: String,
        /// The most keys one of its pages holds (1,000 on S3 and GCS, 5,000 on Azure).
        most: usize,
        offset: Option<String>,
        token: Option<String>,
        done: bool,
    },
    /// Fused: a listing that ended stays ended, however often it is asked again.
    Stream(futures::stream::Fuse<BoxStream<'static, object_store::Result<ObjectMeta>>>),
}

impl Paging {
    pub(super) fn new(store: &Store, scope: &Scope, after: Option<&ItemId>) -> Self {
        let offset = after.and_then(|id| scope.key_of(id)).map(|k| k.path());
        let source = match &store.pages {
            Some(paged) => {
                let under = |p: &Path| join(&paged.root, p.as_ref());
                Source::Paginated {
                    store: paged.store.clone(),
                    prefix: format!("{}/", under(&scope.prefix())),
                    root: paged.root.clone(),
                    most: paged.most,
                    offset: offset.as_ref().map(under),
                    token: None,
                    done: false,
                }
            }
            None => {
                let prefix = scope.prefix();
                // Counted once: one listing, whose pages the backend fetches behind its stream.
                drop(super::Timer::start(super::Op::List));
                let listing = match (&offset, store.order) {
                    (Some(offset), ListOrder::Sorted) => {
                        store.inner.list_with_offset(Some(&prefix), offset)
                    }
                    _ => store.inner.list(Some(&prefix)),
                };
                Source::Stream(listing.fuse())
            }
        };
        Paging {
            scope: scope.clone(),
            after: after.cloned(),
            source,
            returned: 0,
        }
    }

    /// The next keys, about `want` of them (a page may be shorter, and a short page is not
    /// the end); `None` once the listing is over. An error is an error, never an end.
    pub(crate) async fn next(&mut self, want: usize) -> Result<Option<Found>> {
        let Some(listed) = self.objects(want).await? else {
            return Ok(None);
        };
        let mut found = Found::default();
        for object in listed {
            match object {
                Ok(meta) => found.push(&self.scope, &meta.location),
                Err(name) => found.strays.push(name),
            }
        }
        // A store that cannot start at the offset (or does not list in order) lists it all.
        if let Some(after) = &self.after {
            found.keys.retain(|k| k.id().is_some_and(|id| id > after));
        }
        Ok(Some(found))
    }

    /// Every key left with the version it was listed at, in key order: what a live watcher
    /// compares with its copy. Names that are not the scope's keys are left out.
    pub(crate) async fn versions(mut self) -> Result<Vec<(Key, Version)>> {
        let mut found = Vec::new();
        while let Some(listed) = self.objects(usize::MAX).await? {
            for meta in listed.into_iter().flatten() {
                let Some(key) = Key::parse(&meta.location).filter(|k| self.scope.contains(k))
                else {
                    continue;
                };
                let version = Version {
                    e_tag: meta.e_tag,
                    version: meta.version,
                };
                found.push((key, version));
            }
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(found)
    }

    /// The next objects listed, about `want` of them, named by their paths under the store's
    /// root (`Err`: a name that is no path); `None` once the listing is over. On a cloud each
    /// call is one request, counted as one: a listing of 1,150 keys is two of S3's.
    async fn objects(&mut self, want: usize) -> Result<Option<Vec<Result<ObjectMeta, String>>>> {
        let want = want.max(1);
        let mut listed = Vec::new();
        match &mut self.source {
            Source::Paginated {
                store,
                prefix,
                root,
                most,
                offset,
                token,
                done,
            } => {
                if *done {
                    return Ok(None);
                }
                let _timer = super::Timer::start(super::Op::List);
                let page = store
                    .list_paginated(
                        Some(prefix),
                        PaginatedListOptions {
                            offset: offset.clone(),
                            max_keys: Some(want.min(*most)),
                            page_token: token.clone(),
                            ..Default::default()
                        },
                    )
                    .await?;
                // An empty token is no token (some S3-compatible stores send one on the last
                // page), and a token handed back again would list the same page for ever.
                let next = page.page_token.filter(|t| !t.is_empty());
                if next.is_some() && next == *token {
                    return Err(super::StoreError::Unavailable(std::sync::Arc::new(
                        object_store::Error::Generic {
                            store: "pickup",
                            source: "the store handed back the same page token twice".into(),
                        },
                    )));
                }
                *token = next;
                *done = token.is_none();
                for mut meta in page.result.objects {
                    let path = meta.location.as_ref();
                    let path = path.strip_prefix(root.as_str()).unwrap_or(path);
                    let path = path.trim_start_matches('/');
                    listed.push(match Path::parse(path) {
                        Ok(path) => {
                            meta.location = path;
                            Ok(meta)
                        }
                        Err(_) => Err(path.to_string()),
                    });
                }
            }
            Source::Stream(listing) => {
                while listed.len() < want {
                    match listing.next().await {
                        Some(meta) => listed.push(Ok(meta?)),
                        None if listed.is_empty() => return Ok(None),
                        None => break,
                    }
                }
            }
        }
        self.returned += listed.len();
        if super::counted() {
            metrics::counter!(crate::metrics::STORE_KEYS_LISTED).increment(listed.len() as u64);
        }
        Ok(Some(listed))
    }

    /// Everything left, in one [`Found`], in key order whatever the store's.
    pub(crate) async fn rest(mut self) -> Result<Found> {
        let mut all = Found::default();
        while let Some(found) = self.next(usize::MAX).await? {
            all.keys.extend(found.keys);
            all.strays.extend(found.strays);
        }
        all.keys.sort_unstable();
        all.keys.dedup();
        Ok(all)
    }
}

/// `root/path`, or `path` when there is no root.
fn join(root: &str, path: &str) -> String {
    if root.is_empty() {
        path.to_string()
    } else {
        format!("{root}/{path}")
    }
}
