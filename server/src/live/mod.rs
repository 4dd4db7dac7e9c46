//! Live pages: one watcher per workspace per server, shared by every viewer subscribed to it.
//!
//! While a workspace has a subscriber on this server, its watcher reads it every
//! `PICKUP_LIVE_EVERY` (1 s by default), or at once when a write goes through this server:
//! - one `recent` of the workspace for every viewer at once (filter All, no dismissals, the
//!   largest cap any subscriber asked for plus the most cards any of them dismissed), so the
//!   store cost is one listing and the page's record reads, however many watch;
//! - every viewer's dismissals in one listing, every [`DISMISSALS_EVERY`] reads (at once after a
//!   dismissal through this server);
//! - one `recent` per viewer who watches "Mine" (their own markers: a listing each).
//!
//! Each subscriber's page is cut from that shared result (their filter, their dismissals, their
//! cap) and sent only when it changed. The watcher stops when its last subscriber goes.

use crate::error::Error;
use crate::index::Index;
use crate::index::ItemId;
use crate::index::{UserId, Workspace};
use app::model::{Card, Filter, RecentPage, MAX_CAP};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{watch, Notify};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The dismissals of every viewer are listed once in this many reads of the workspace (and at
/// once after a dismissal through this server): 0.2 listings a second at the default period.
pub const DISMISSALS_EVERY: u64 = 5;

/// The watchers of this server, one per workspace with subscribers.
pub struct Live {
    index: Arc<Index>,
    every: Duration,
    watchers: Mutex<HashMap<Workspace, Arc<Watcher>>>,
    /// Deletes found by the watchers; graceful shutdown waits for them.
    background: TaskTracker,
    /// Cancelled on shutdown: every stream ends, telling its client to reconnect elsewhere.
    stop: CancellationToken,
    /// Streams open now, and the most this server allows: each holds a connection for as long
    /// as it lasts, so some must stay for everything else (beyond it, widgets poll).
    streams: Arc<AtomicUsize>,
    max_streams: usize,
}

struct Watcher {
    ws: Workspace,
    tx: watch::Sender<Arc<Snapshot>>,
    wake: Notify,
    wants: Mutex<Wants>,
    /// A dismissal went through this server: list the dismissals on the next read.
    dismissed: AtomicBool,
    /// A prune this watcher started is still running.
    pruning: Arc<AtomicBool>,
}

/// What the subscribers ask of a watcher. `version` moves on with every change, and a snapshot
/// says which version it was made for, so a new subscriber waits for one made with it in mind.
#[derive(Debug, Clone, Default)]
struct Wants {
    version: u64,
    /// The caps asked for, with how many subscribers ask each.
    caps: BTreeMap<usize, usize>,
    /// The viewers who watch "Mine", with how many subscriptions each.
    mine: BTreeMap<UserId, usize>,
}

/// One read of the workspace, for every subscriber.
#[derive(Debug, Default)]
pub struct Snapshot {
    wants: u64,
    /// `None` before the first read.
    state: Option<Result<Shared, String>>,
}

#[derive(Debug)]
struct Shared {
    all: RecentPage,
    /// Each "Mine" viewer's page, or why it could not be read (that viewer alone is told).
    mine: HashMap<UserId, Result<RecentPage, String>>,
    dismissed: HashMap<UserId, HashSet<ItemId>>,
}

/// What a subscriber is sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Page(RecentPage),
    /// The store did not answer: the last page stands, and the watcher keeps trying.
    Unavailable,
}

impl Live {
    pub fn new(
        index: Arc<Index>,
        every: Duration,
        max_streams: usize,
        background: TaskTracker,
    ) -> Arc<Self> {
        Arc::new(Live {
            index,
            every,
            watchers: Mutex::default(),
            background,
            stop: CancellationToken::new(),
            streams: Arc::default(),
            max_streams,
        })
    }

    /// The server is stopping: end every stream now, so clients reconnect to another server.
    pub fn stop(&self) {
        self.stop.cancel();
    }

    /// Watch `ws` for `viewer`; the watcher starts with the first subscriber.
    pub fn subscribe(
        self: &Arc<Self>,
        ws: &Workspace,
        viewer: &UserId,
        filter: Filter,
        cap: Option<u32>,
    ) -> Result<Subscription, Error> {
        let open = self.streams.fetch_add(1, Ordering::SeqCst);
        if open >= self.max_streams {
            self.streams.fetch_sub(1, Ordering::SeqCst);
            return Err(Error::TooManyStreams(open));
        }
        let cap = cap.unwrap_or(self.index.default_cap).clamp(1, MAX_CAP) as usize;
        let mut watchers = self.watchers.lock().expect("live lock");
        let watcher = watchers
            .entry(ws.clone())
            .or_insert_with(|| {
                let (tx, _) = watch::channel(Arc::new(Snapshot::default()));
                let watcher = Arc::new(Watcher {
                    ws: ws.clone(),
                    tx,
                    wake: Notify::new(),
                    wants: Mutex::default(),
                    dismissed: true.into(),
                    pruning: Arc::default(),
                });
                tokio::spawn(self.clone().watch(watcher.clone()));
                watcher
            })
            .clone();
        // Subscribed under the lock, so the watcher cannot retire between lookup and here.
        let rx = watcher.tx.subscribe();
        metrics::gauge!(crate::metrics::LIVE_WATCHERS).set(watchers.len() as f64);
        metrics::gauge!(crate::metrics::LIVE_SUBSCRIBERS).increment(1);
        drop(watchers);
        let version = watcher.want(|w| {
            *w.caps.entry(cap).or_default() += 1;
            if filter == Filter::Mine {
                *w.mine.entry(viewer.clone()).or_default() += 1;
            }
        });
        watcher.wake.notify_one();
        Ok(Subscription {
            rx,
            streams: self.streams.clone(),
            stop: self.stop.clone(),
            watcher,
            viewer: viewer.clone(),
            filter,
            cap,
            version,
            last: None,
        })
    }

    /// A write to `ws` went through this server: its watcher reads again now.
    pub fn wrote(&self, ws: &Workspace, dismissal: bool) {
        let watchers = self.watchers.lock().expect("live lock");
        if let Some(w) = watchers.get(ws) {
            if dismissal {
                w.dismissed.store(true, Ordering::SeqCst);
            }
            w.wake.notify_one();
        }
    }

    /// The watcher's loop: read, publish what changed, wait for the period or a write; stop
    /// once nobody subscribes.
    async fn watch(self: Arc<Self>, w: Arc<Watcher>) {
        let mut reads: u64 = 0;
        let mut dismissed = HashMap::new();
        loop {
            let wants = w.wants.lock().expect("live lock").clone();
            let list_dismissals =
                reads.is_multiple_of(DISMISSALS_EVERY) || w.dismissed.swap(false, Ordering::SeqCst);
            let state = self
                .read(&w.ws, &wants, list_dismissals, &mut dismissed, &w.pruning)
                .await;
            reads += 1;
            w.tx.send_if_modified(|old| {
                let changed = old.wants != wants.version || !same(&old.state, &state);
                if changed {
                    *old = Arc::new(Snapshot {
                        wants: wants.version,
                        state: Some(state),
                    });
                }
                changed
            });
            tokio::select! {
                // Stopping: the streams end on their own; the watcher reads no more.
                () = self.stop.cancelled() => return,
                () = tokio::time::sleep(self.every) => {}
                () = w.wake.notified() => {}
                () = w.tx.closed() => {
                    if self.retire(&w) {
                        return;
                    }
                }
            }
        }
    }

    /// Stop watching if nobody subscribes (checked under the lock `subscribe` takes).
    fn retire(&self, w: &Arc<Watcher>) -> bool {
        let mut watchers = self.watchers.lock().expect("live lock");
        if w.tx.receiver_count() > 0 {
            return false;
        }
        if watchers.get(&w.ws).is_some_and(|v| Arc::ptr_eq(v, w)) {
            watchers.remove(&w.ws);
        }
        metrics::gauge!(crate::metrics::LIVE_WATCHERS).set(watchers.len() as f64);
        true
    }

    /// One read of the workspace for every subscriber.
    async fn read(
        &self,
        ws: &Workspace,
        wants: &Wants,
        list_dismissals: bool,
        dismissed: &mut HashMap<UserId, HashSet<ItemId>>,
        pruning: &Arc<AtomicBool>,
    ) -> Result<Shared, String> {
        let log = |e: &crate::index::IndexError| tracing::warn!(%ws, error = %e, "live: the store did not answer");
        if list_dismissals {
            *dismissed = self.index.all_dismissals(ws).await.map_err(|e| {
                log(&e);
                e.to_string()
            })?;
        }
        // Enough cards that every viewer still has their cap after their own dismissals.
        let most_dismissed = dismissed.values().map(HashSet::len).max().unwrap_or(0);
        let largest = wants.caps.keys().next_back().copied().unwrap_or(1);
        let cap = (largest + most_dismissed).min(MAX_CAP as usize) as u32;
        let nobody = UserId::parse("-").expect("a valid user");
        let none = HashSet::new();
        let all = self
            .index
            .recent_without(ws, &nobody, Filter::All, Some(cap), None, &none)
            .await
            .map_err(|e| {
                log(&e);
                e.to_string()
            })?;
        let mut deletes = all.prune.deletes;
        let mut mine = HashMap::new();
        for user in wants.mine.keys() {
            let theirs = dismissed.get(user).unwrap_or(&none);
            let cap = (largest + theirs.len()).min(MAX_CAP as usize) as u32;
            let read = self
                .index
                .recent_without(ws, user, Filter::Mine, Some(cap), None, theirs)
                .await;
            let page = match read {
                Ok(read) => {
                    deletes.extend(read.prune.deletes);
                    Ok(read.page)
                }
                Err(e) => {
                    log(&e);
                    Err(e.to_string())
                }
            };
            mine.insert(user.clone(), page);
        }
        self.prune(
            pruning,
            crate::index::Prune {
                deletes,
                by: crate::index::FoundBy::Read,
            },
        );
        Ok(Shared {
            all: all.page,
            mine,
            dismissed: dismissed.clone(),
        })
    }

    /// Delete what a read found dead, in the background; one prune at a time per watcher (the
    /// next read finds again whatever a slow one has not deleted yet).
    fn prune(&self, pruning: &Arc<AtomicBool>, prune: crate::index::Prune) {
        if prune.deletes.is_empty() || pruning.swap(true, Ordering::SeqCst) {
            return;
        }
        let (index, pruning) = (self.index.clone(), pruning.clone());
        self.background.spawn(async move {
            index.apply(&prune).await;
            pruning.store(false, Ordering::SeqCst);
        });
    }
}

/// Two reads that would give every subscriber the same page (`generated_at` aside).
fn same(old: &Option<Result<Shared, String>>, new: &Result<Shared, String>) -> bool {
    let page = |a: &RecentPage, b: &RecentPage| {
        a.cards == b.cards && a.more == b.more && a.partial == b.partial
    };
    match (old, new) {
        (Some(Ok(a)), Ok(b)) => {
            page(&a.all, &b.all)
                && a.dismissed == b.dismissed
                && a.mine.len() == b.mine.len()
                && a.mine.iter().all(|(u, p)| match (p, b.mine.get(u)) {
                    (Ok(p), Some(Ok(q))) => page(p, q),
                    (Err(_), Some(Err(_))) => true,
                    _ => false,
                })
        }
        (Some(Err(_)), Err(_)) => true,
        _ => false,
    }
}

impl Watcher {
    fn want(&self, change: impl FnOnce(&mut Wants)) -> u64 {
        let mut wants = self.wants.lock().expect("live lock");
        change(&mut wants);
        wants.version += 1;
        wants.version
    }
}

/// One viewer's subscription. Dropping it unsubscribes.
pub struct Subscription {
    rx: watch::Receiver<Arc<Snapshot>>,
    /// The server's count of open streams, one less when this one goes.
    streams: Arc<AtomicUsize>,
    stop: CancellationToken,
    watcher: Arc<Watcher>,
    viewer: UserId,
    filter: Filter,
    cap: usize,
    /// The first snapshot this subscription may use (made knowing it is there).
    version: u64,
    last: Option<Event>,
}

impl Subscription {
    /// The next event for this viewer: the first page, then each change. `None` if the
    /// watcher is gone (the server is stopping).
    pub async fn next(&mut self) -> Option<Event> {
        loop {
            let snapshot = self.rx.borrow_and_update().clone();
            let event = match &snapshot.state {
                Some(state) if snapshot.wants >= self.version => Some(self.view(state)),
                _ => None,
            };
            if let Some(event) = event {
                if self.last.as_ref() != Some(&event) {
                    self.last = Some(event.clone());
                    return Some(event);
                }
            }
            self.rx.changed().await.ok()?;
        }
    }

    /// This viewer's page, cut from the shared read.
    fn view(&self, state: &Result<Shared, String>) -> Event {
        let Ok(shared) = state else {
            return Event::Unavailable;
        };
        let none = HashSet::new();
        let dismissed = shared.dismissed.get(&self.viewer).unwrap_or(&none);
        let from = match self.filter {
            Filter::All => &shared.all,
            Filter::Mine => match shared.mine.get(&self.viewer) {
                Some(Ok(page)) => page,
                Some(Err(_)) | None => return Event::Unavailable,
            },
        };
        Event::Page(cut(from, dismissed, self.cap))
    }
}

/// What a stream sends, in order: pages (and "unavailable" while the store does not answer),
/// then one closing frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    Event(Event),
    /// The token expired: the stream ends; a new one needs a new token.
    Unauthenticated,
    /// The server is stopping: the stream ends; reconnect (to another server).
    Reconnect,
}

impl Subscription {
    /// The stream of frames for this subscription, ending when the token expires
    /// (`expires_at`, seconds since the epoch) or the server stops.
    pub fn frames(self, expires_at: u64) -> impl futures::Stream<Item = Frame> + Send {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let left = Duration::from_secs(expires_at).saturating_sub(now);
        // A far-off `exp` (signed, so the issuer's choice) waits a year at most.
        let left = left.min(Duration::from_secs(365 * 24 * 3600));
        let expiry = tokio::time::Instant::now() + left;
        futures::stream::unfold(Some(self), move |sub| async move {
            let mut sub = sub?;
            let stop = sub.stop.clone();
            tokio::select! {
                biased;
                () = stop.cancelled() => Some((Frame::Reconnect, None)),
                () = tokio::time::sleep_until(expiry) => Some((Frame::Unauthenticated, None)),
                event = sub.next() => match event {
                    Some(event) => Some((Frame::Event(event), Some(sub))),
                    None => Some((Frame::Reconnect, None)),
                },
            }
        })
    }
}

/// A shared page as one viewer sees it: without what they dismissed, at most `cap` cards.
pub fn cut(page: &RecentPage, dismissed: &HashSet<ItemId>, cap: usize) -> RecentPage {
    let mut cards: Vec<Card> = page
        .cards
        .iter()
        .filter(|c| !ItemId::parse(&c.id).is_ok_and(|id| dismissed.contains(&id)))
        .cloned()
        .collect();
    let more = page.more || cards.len() > cap;
    cards.truncate(cap);
    RecentPage {
        cards,
        more,
        partial: page.partial,
        generated_at: page.generated_at.clone(),
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.streams.fetch_sub(1, Ordering::SeqCst);
        metrics::gauge!(crate::metrics::LIVE_SUBSCRIBERS).decrement(1);
        let (cap, filter, viewer) = (self.cap, self.filter, self.viewer.clone());
        self.watcher.want(|w| {
            release(&mut w.caps, &cap);
            if filter == Filter::Mine {
                release(&mut w.mine, &viewer);
            }
        });
    }
}

/// One fewer asking for `key`; gone at zero.
fn release<K: Ord + Clone>(counts: &mut BTreeMap<K, usize>, key: &K) {
    if let Some(n) = counts.get_mut(key) {
        *n -= 1;
        if *n == 0 {
            counts.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::model::{Owner, Status};

    fn card(id: &ItemId) -> Card {
        Card {
            id: id.to_string(),
            key: id.key().to_string(),
            title: "t".into(),
            url: None,
            status: Status::Running,
            progress: None,
            owner: Owner {
                sub: "a".into(),
                name: "A".into(),
            },
            created_at: String::new(),
            updated_at: String::new(),
            finished_at: None,
            stalled: false,
        }
    }

    #[test]
    fn a_viewer_sees_the_shared_page_without_their_dismissals_and_within_their_cap() {
        let ids: Vec<ItemId> = (0..5)
            .map(|i| {
                ItemId::new(
                    1_800_000_000_000 - i,
                    crate::index::SubKey::parse(&format!("k{i}")).unwrap(),
                )
                .unwrap()
            })
            .collect();
        let page = RecentPage {
            cards: ids.iter().map(card).collect(),
            more: false,
            partial: false,
            generated_at: String::new(),
        };
        let dismissed = HashSet::from([ids[1].clone()]);
        let mine = cut(&page, &dismissed, 3);
        let shown: Vec<&str> = mine.cards.iter().map(|c| c.id.as_str()).collect();
        let want = [ids[0].to_string(), ids[2].to_string(), ids[3].to_string()];
        assert_eq!(shown, want.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(mine.more, "one more than the cap after the dismissal");
        let all = cut(&page, &HashSet::new(), 5);
        assert_eq!((all.cards.len(), all.more), (5, false));
    }
}
