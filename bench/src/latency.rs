//! An `ObjectStore` wrapper that gives every request a fixed network round trip, so that the
//! designs can be compared as a cloud store would see them: bound by round trips, not by the CPU
//! of an emulator sharing the benchmark's cores.
//!
//! Every call is one request: get (and head, which object_store sends as a get), put, copy,
//! each deleted path, and each page of a listing (the first page is the call itself; one more
//! round trip for every further `page_size` entries, taken only when the caller reads that far,
//! as a paginated listing fetches its next page lazily). The inner store acts half a round
//! trip after the call and the caller hears back half a round trip after that, so a read and a
//! conditional write based on it are a full round trip apart at the store, as over a network.
//!
//! Not object_store's `ThrottledStore`: it charges a listing per call plus per entry, and a
//! per-entry sleep shorter than tokio's 1 ms timer tick sleeps a whole tick, so a 1,000-key
//! page would cost a second instead of one round trip. A page is the unit a cloud store
//! charges, so this wrapper counts pages.

use async_trait::async_trait;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The benchmarks' default round trip: a same-region request to a cloud object store.
pub const DEFAULT_ROUND_TRIP: Duration = Duration::from_millis(20);

/// Entries per listing page: S3's ListObjectsV2 maximum (Azure pages up to 5,000).
pub const DEFAULT_PAGE_SIZE: usize = 1_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    pub round_trip: Duration,
    pub page_size: usize,
}

impl Default for Network {
    fn default() -> Self {
        Network {
            round_trip: DEFAULT_ROUND_TRIP,
            page_size: DEFAULT_PAGE_SIZE,
        }
    }
}

impl Network {
    fn half(self) -> Duration {
        self.round_trip / 2
    }
}

#[derive(Debug)]
pub struct Latency {
    inner: Arc<dyn ObjectStore>,
    net: Network,
}

impl Latency {
    pub fn new(inner: Arc<dyn ObjectStore>, net: Network) -> Self {
        Latency { inner, net }
    }

    /// One request: there, the store's work, back.
    async fn request<T>(&self, work: impl std::future::Future<Output = T>) -> T {
        tokio::time::sleep(self.net.half()).await;
        let out = work.await;
        tokio::time::sleep(self.net.half()).await;
        out
    }

    /// A listing: the first page's round trip around the call, one more round trip before
    /// every further page the caller reads into.
    fn paged(
        &self,
        list: impl FnOnce(&Arc<dyn ObjectStore>) -> BoxStream<'static, Result<ObjectMeta>>
            + Send
            + 'static,
    ) -> BoxStream<'static, Result<ObjectMeta>> {
        let (inner, net) = (self.inner.clone(), self.net);
        futures::stream::once(async move {
            tokio::time::sleep(net.half()).await;
            let first = list(&inner);
            tokio::time::sleep(net.half()).await;
            first
                .enumerate()
                .then(move |(i, entry)| async move {
                    if i > 0 && i % net.page_size.max(1) == 0 {
                        tokio::time::sleep(net.round_trip).await;
                    }
                    entry
                })
                .boxed()
        })
        .flatten()
        .boxed()
    }
}

impl fmt::Display for Latency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Latency({:?}, {})", self.net.round_trip, self.inner)
    }
}

#[async_trait]
impl ObjectStore for Latency {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.request(self.inner.put_opts(location, payload, opts))
            .await
    }

    /// The upload's start is one request; its parts are not delayed (nothing here uploads in
    /// parts).
    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.request(self.inner.put_multipart_opts(location, opts))
            .await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        self.request(self.inner.get_opts(location, options)).await
    }

    /// One request per path, in the order the caller's stream yields them (no batch delete).
    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        let (inner, net) = (self.inner.clone(), self.net);
        locations
            .then(move |location| {
                let inner = inner.clone();
                async move {
                    let location = location?;
                    tokio::time::sleep(net.half()).await;
                    let done = inner
                        .delete_stream(futures::stream::once(async { Ok(location) }).boxed())
                        .next()
                        .await;
                    tokio::time::sleep(net.half()).await;
                    done.unwrap_or_else(|| {
                        Err(object_store::Error::Generic {
                            store: "Latency",
                            source: "the inner store answered a delete with nothing".into(),
                        })
                    })
                }
            })
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        let prefix = prefix.cloned();
        self.paged(move |inner| inner.list(prefix.as_ref()))
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, Result<ObjectMeta>> {
        let (prefix, offset) = (prefix.cloned(), offset.clone());
        self.paged(move |inner| inner.list_with_offset(prefix.as_ref(), &offset))
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        let listed = self.request(self.inner.list_with_delimiter(prefix)).await?;
        let entries = listed.objects.len() + listed.common_prefixes.len();
        let more_pages = entries.saturating_sub(1) / self.net.page_size.max(1);
        tokio::time::sleep(self.net.round_trip * more_pages as u32).await;
        Ok(listed)
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.request(self.inner.copy_opts(from, to, options)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::TryStreamExt;
    use object_store::memory::InMemory;
    use object_store::ObjectStoreExt;
    // Paused time: the sleeps advance the clock exactly, whatever else the machine is doing.
    use tokio::time::Instant;

    fn store(page_size: usize) -> Latency {
        Latency::new(
            Arc::new(InMemory::new()),
            Network {
                round_trip: Duration::from_millis(20),
                page_size,
            },
        )
    }

    fn round_trips(t: Instant) -> f64 {
        t.elapsed().as_secs_f64() / 0.020
    }

    #[tokio::test(start_paused = true)]
    async fn every_request_takes_one_round_trip() {
        let s = store(1_000);
        let p = Path::from("a/b");
        let t = Instant::now();
        s.put(&p, PutPayload::from_static(b"x")).await.unwrap();
        s.head(&p).await.unwrap();
        s.get(&p).await.unwrap().bytes().await.unwrap();
        s.delete(&p).await.unwrap();
        let n = round_trips(t);
        assert!((4.0..5.0).contains(&n), "{n} round trips for 4 requests");
    }

    #[tokio::test(start_paused = true)]
    async fn a_listing_costs_a_round_trip_per_page_read() {
        let s = store(10);
        for i in 0..25 {
            s.put(&Path::from(format!("k/{i:02}")), PutPayload::new())
                .await
                .unwrap();
        }
        let t = Instant::now();
        let first: Vec<_> = s.list(Some(&Path::from("k"))).take(5).collect().await;
        assert_eq!(first.len(), 5);
        let n = round_trips(t);
        assert!((1.0..1.9).contains(&n), "{n} round trips for one page");

        let t = Instant::now();
        let all: Vec<_> = s.list(Some(&Path::from("k"))).try_collect().await.unwrap();
        assert_eq!(all.len(), 25);
        let n = round_trips(t);
        assert!((3.0..3.9).contains(&n), "{n} round trips for three pages");
    }
}
