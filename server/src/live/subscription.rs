//! One viewer's subscription to a watcher: the pages it is sent, and the frames of its stream.

use super::streams::StreamSlot;
use super::view::{Snapshot, WantedPage};
use super::watcher::Watcher;
use app::contract::RecentPage;
use futures::future::BoxFuture;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// How often an open stream checks that its token still holds (its key is still in the
/// identity provider's set, the caller still a member): against the cached keys, no network.
/// A belt: every change of the key set is checked at once, and `exp` has a timer of its own.
/// (Every 2 s, the checks of 1,667 idle streams were a sixth of an idle server's CPU, make
/// bench-scale.)
pub(crate) const RECHECK_EVERY: Duration = Duration::from_secs(30);

/// What a subscriber is sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Page(RecentPage),
    /// The store did not answer: the last page stands, and the watcher keeps trying.
    Unavailable,
}

/// One viewer's subscription. Dropping it unsubscribes.
pub struct Subscription {
    rx: watch::Receiver<Arc<Snapshot>>,
    /// The stream's place, released with its last subscription.
    _slot: Arc<StreamSlot>,
    stop: CancellationToken,
    watcher: Arc<Watcher>,
    page: WantedPage,
    /// The first snapshot this subscription may use (made knowing it is there).
    version: u64,
    last: Option<Event>,
}

/// Two pages that show the same (`generated_at` aside).
pub(super) fn same_page(a: &RecentPage, b: &RecentPage) -> bool {
    a.cards == b.cards && a.more == b.more && a.partial == b.partial
}

fn same_event(a: &Event, b: &Event) -> bool {
    match (a, b) {
        (Event::Page(a), Event::Page(b)) => same_page(a, b),
        (Event::Unavailable, Event::Unavailable) => true,
        _ => false,
    }
}

impl Subscription {
    pub(super) fn new(
        rx: watch::Receiver<Arc<Snapshot>>,
        slot: Arc<StreamSlot>,
        stop: CancellationToken,
        watcher: Arc<Watcher>,
        page: WantedPage,
        version: u64,
    ) -> Self {
        Subscription {
            rx,
            _slot: slot,
            stop,
            watcher,
            page,
            version,
            last: None,
        }
    }

    /// The next event for this viewer: the first page, then each change. `None` if the
    /// watcher is gone (the server is stopping).
    pub async fn next(&mut self) -> Option<Event> {
        loop {
            let snapshot = self.rx.borrow_and_update().clone();
            let event = match &snapshot.pages {
                Some(Ok(pages)) if snapshot.wants >= self.version => {
                    pages.get(&self.page).cloned().map(Event::Page)
                }
                Some(Err(_)) => Some(Event::Unavailable),
                _ => None,
            };
            if let Some(event) = event {
                if !self.last.as_ref().is_some_and(|l| same_event(l, &event)) {
                    self.last = Some(event.clone());
                    return Some(event);
                }
            }
            self.rx.changed().await.ok()?;
        }
    }
}

/// What a stream sends, in order: pages (and "unavailable" while the store does not answer),
/// then one closing frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    Event(Event),
    /// The token expired, or no longer holds: the stream ends; a new one needs a new token.
    Unauthenticated,
    /// The server is stopping: the stream ends; reconnect (to another server).
    Reconnect,
}

/// Whether the token that opened a stream still holds.
pub(crate) type Recheck = Arc<dyn Fn() -> BoxFuture<'static, bool> + Send + Sync>;

/// When a stream checks that its token still holds.
#[derive(Clone)]
pub struct Rechecks {
    pub check: Recheck,
    /// Told when the identity provider's key set changes: checked at once then, so a stream
    /// whose key was withdrawn ends at that refresh (`None`: no identity provider).
    pub keys: Option<watch::Receiver<u64>>,
}

/// Waits for the next change of the key set, or for ever without one.
async fn keys_changed(keys: &mut Option<watch::Receiver<u64>>) {
    let gone = match keys {
        Some(rx) => rx.changed().await.is_err(),
        None => true,
    };
    if gone {
        // No identity provider, or its refresher is gone: nothing will change.
        *keys = None;
        std::future::pending::<()>().await;
    }
}

impl Subscription {
    /// The stream of frames for this subscription, ending when the token expires
    /// (`expires_at`, seconds since the epoch), stops holding (checked every
    /// [`RECHECK_EVERY`] on a timer of its own, however busy the stream, and at once when the
    /// key set changes), or the server stops.
    pub fn frames(
        self,
        expires_at: u64,
        rechecks: Rechecks,
    ) -> impl futures::Stream<Item = Frame> + Send {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let left = Duration::from_secs(expires_at).saturating_sub(now);
        // A far-off `exp` (signed, so the issuer's choice) waits a year at most.
        let left = left.min(Duration::from_secs(365 * 24 * 3600));
        let expiry = tokio::time::Instant::now() + left;
        let check =
            tokio::time::interval_at(tokio::time::Instant::now() + RECHECK_EVERY, RECHECK_EVERY);
        let Rechecks {
            check: recheck,
            keys,
        } = rechecks;
        futures::stream::unfold(Some((self, check, keys)), move |state| {
            let recheck = recheck.clone();
            async move {
                let (mut sub, mut check, mut keys) = state?;
                let stop = sub.stop.clone();
                loop {
                    tokio::select! {
                        biased;
                        () = stop.cancelled() => return Some((Frame::Reconnect, None)),
                        () = tokio::time::sleep_until(expiry) => return Some((Frame::Unauthenticated, None)),
                        () = keys_changed(&mut keys) => {
                            if !recheck().await {
                                return Some((Frame::Unauthenticated, None));
                            }
                        }
                        _ = check.tick() => {
                            if !recheck().await {
                                return Some((Frame::Unauthenticated, None));
                            }
                        }
                        event = sub.next() => return match event {
                            Some(event) => Some((Frame::Event(event), Some((sub, check, keys)))),
                            None => Some((Frame::Reconnect, None)),
                        },
                    }
                }
            }
        })
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        metrics::gauge!(crate::metrics::LIVE_SUBSCRIBERS).decrement(1);
        let page = self.page.clone();
        self.watcher.want(|w| {
            if let Some(n) = w.pages.get_mut(&page) {
                *n -= 1;
                if *n == 0 {
                    w.pages.remove(&page);
                }
            }
        });
    }
}
