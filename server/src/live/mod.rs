//! Live pages: one watcher per watched workspace per server, shared by every viewer subscribed
//! to it, driven by changes rather than by the clock.
//!
//! A watcher holds a copy of the workspace ([`replica`]) and computes each subscriber's page
//! from it with the index's own read path, so a live page is the page `GET /recent` gives.
//! - A write through this server updates the copy from the write itself ([`Fact`]), and is
//!   published on the bus ([`bus`], `PICKUP_BUS`), whose facts other servers apply the same way.
//! - Changes that come from time alone (a heartbeat going stale, a finished item passing
//!   keep-finished, a grace period ending) are computed from the copy every `PICKUP_LIVE_EVERY`.
//! - The store is listed only to reconcile the copy: every `PICKUP_RECONCILE_EVERY` by the one
//!   server holding the workspace's lease on the bus, at once after a gap or a reconnect on the
//!   bus or an error, and every `PICKUP_LIVE_EVERY` while there is no bus (or it is down).
//! - A page is sent to a subscriber only when its content changed; a joining subscriber gets
//!   the current page and nobody else hears of it.

mod bus;
mod fact;
mod replica;
mod seal;
mod subscription;

pub use bus::{redacted, BusConfig};
pub use fact::{Change, Fact};
pub use seal::BusKey;
pub use subscription::{Event, Frame, Recheck, Rechecks, Subscription, RECHECK_EVERY};

use crate::error::Error;
use crate::index::{Index, UserId, Workspace};
use app::contract::{Filter, RecentPage, MAX_CAP};
use replica::{Applied, Replica};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// How live pages are kept up to date, and what they may cost.
#[derive(Debug, Clone)]
pub struct LiveConfig {
    /// How often pages are computed again from the copy (time-driven changes), and how often
    /// the store is read while there is no bus.
    pub every: Duration,
    /// How often one server reconciles a workspace for all, while the bus is up.
    pub reconcile_every: Duration,
    /// `PICKUP_BUS` (`redis://…` or `rediss://…`): facts between servers.
    pub bus: Option<BusConfig>,
    pub limits: StreamLimits,
}

/// Live streams open at once: on the server, of one workspace, of one viewer. Each holds a
/// connection for as long as it lasts; the shares keep one workspace, or one member, from
/// holding everyone else out.
#[derive(Debug, Clone, Copy)]
pub struct StreamLimits {
    pub server: usize,
    pub workspace: usize,
    pub viewer: usize,
}

/// How the watchers are driven now, for `/readyz`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// No bus: every watcher polls the store.
    Polling,
    /// Facts on the bus drive the watchers.
    Bus,
    /// The bus is configured but down: every watcher polls the store until it is back.
    BusDown,
}

/// The watchers of this server, one per workspace with subscribers.
pub struct Live {
    index: Arc<Index>,
    config: LiveConfig,
    watchers: Mutex<HashMap<Workspace, Arc<Watcher>>>,
    /// Cancelled on shutdown: every stream ends, telling its client to reconnect elsewhere.
    stop: CancellationToken,
    streams: Arc<Mutex<Streams>>,
    bus: Option<Arc<bus::Bus>>,
}

/// Open streams, counted where the limits apply.
#[derive(Debug, Default)]
pub(crate) struct Streams {
    server: usize,
    workspace: HashMap<Workspace, usize>,
    viewer: HashMap<(Workspace, UserId), usize>,
}

impl Streams {
    fn release(&mut self, ws: &Workspace, viewer: &UserId) {
        self.server = self.server.saturating_sub(1);
        release(&mut self.workspace, ws);
        release(&mut self.viewer, &(ws.clone(), viewer.clone()));
    }
}

/// One open stream's place in [`Streams`], shared by its subscriptions and given back when the
/// last of them is dropped.
pub(crate) struct StreamSlot {
    streams: Arc<Mutex<Streams>>,
    ws: Workspace,
    viewer: UserId,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.streams
            .lock()
            .expect("live lock")
            .release(&self.ws, &self.viewer);
    }
}

fn release<K: std::hash::Hash + Eq + Clone>(counts: &mut HashMap<K, usize>, key: &K) {
    if let Some(n) = counts.get_mut(key) {
        *n -= 1;
        if *n == 0 {
            counts.remove(key);
        }
    }
}

/// A doubt heard within this of a watcher's last full reconcile waits until this has passed:
/// however many doubts peers send (or gaps the bus shows), a watcher reads its workspace whole
/// at most once in this.
const DOUBT_EVERY: Duration = Duration::from_secs(5);

/// Facts and doubts waiting for one watcher (or for the watchers, from the bus), at most.
const QUEUE: usize = 4096;

/// What a watcher is told.
enum Input {
    Fact(Fact),
    /// Reconcile now, reading every record again (the copy may have missed a fact).
    Doubt,
    /// A subscriber came or went: compute the pages asked for.
    Wants,
}

struct Watcher {
    ws: Workspace,
    tx: watch::Sender<Arc<Snapshot>>,
    /// Bounded: what does not fit sets `missed`, and the watcher reconciles whole.
    input: mpsc::Sender<Input>,
    missed: AtomicBool,
    wants: Mutex<Wants>,
}

/// One page a subscriber may ask for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct View {
    viewer: UserId,
    /// The "Mine" filter, else everyone's (`Filter` is a wire type: no order of its own).
    mine: bool,
    cap: u32,
}

impl View {
    fn filter(&self) -> Filter {
        if self.mine {
            Filter::Mine
        } else {
            Filter::All
        }
    }
}

/// What the subscribers ask of a watcher. `version` moves on with every change, and a snapshot
/// says which version it was made for, so a new subscriber waits for one made with it in mind.
#[derive(Debug, Clone, Default)]
struct Wants {
    version: u64,
    views: BTreeMap<View, usize>,
}

/// The pages of every view asked for, computed from the copy at one moment.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    wants: u64,
    /// `None` before the first reconcile; `Err` while the store cannot be reconciled.
    pages: Option<Result<HashMap<View, RecentPage>, String>>,
}

impl Live {
    pub fn new(index: Arc<Index>, config: LiveConfig) -> anyhow::Result<Arc<Self>> {
        let bus = match &config.bus {
            Some(bus) => Some(bus::Bus::new(bus, index.clone())?),
            None => None,
        };
        let live = Arc::new(Live {
            index,
            config,
            watchers: Mutex::default(),
            stop: CancellationToken::new(),
            streams: Arc::default(),
            bus,
        });
        metrics::gauge!(crate::metrics::LIVE_POLLING).set(1.0);
        if let Some(bus) = &live.bus {
            let (tx, rx) = mpsc::channel(QUEUE);
            tokio::spawn(bus.clone().listen(tx, live.stop.clone()));
            tokio::spawn(live.clone().hear(rx));
        }
        Ok(live)
    }

    /// The server is stopping: end every stream now, so clients reconnect to another server.
    pub fn stop(&self) {
        self.stop.cancel();
    }

    pub fn mode(&self) -> Mode {
        match &self.bus {
            None => Mode::Polling,
            Some(bus) if bus.is_up() => Mode::Bus,
            Some(_) => Mode::BusDown,
        }
    }

    fn polling(&self) -> bool {
        self.mode() != Mode::Bus
    }

    /// Watch `ws` for `viewer`, one subscription per view asked for, all of one stream: it
    /// counts once against the limits, however many views it carries. The watcher starts with
    /// the first subscriber.
    pub fn subscribe(
        self: &Arc<Self>,
        ws: &Workspace,
        viewer: &UserId,
        views: &[(Filter, Option<u32>)],
    ) -> Result<Vec<Subscription>, Error> {
        let slot = Arc::new(self.open_stream(ws, viewer)?);
        let mut watchers = self.watchers.lock().expect("live lock");
        let watcher = watchers
            .entry(ws.clone())
            .or_insert_with(|| {
                let (tx, _) = watch::channel(Arc::new(Snapshot::default()));
                let (input, rx) = mpsc::channel(QUEUE);
                let watcher = Arc::new(Watcher {
                    ws: ws.clone(),
                    tx,
                    input,
                    missed: AtomicBool::new(false),
                    wants: Mutex::default(),
                });
                tokio::spawn(self.clone().watch(watcher.clone(), rx));
                watcher
            })
            .clone();
        // Subscribed under the lock, so the watcher cannot retire between lookup and here.
        let receivers: Vec<_> = views.iter().map(|_| watcher.tx.subscribe()).collect();
        metrics::gauge!(crate::metrics::LIVE_WATCHERS).set(watchers.len() as f64);
        drop(watchers);
        let subs = views
            .iter()
            .zip(receivers)
            .map(|(&(filter, cap), rx)| {
                let view = View {
                    viewer: viewer.clone(),
                    mine: filter == Filter::Mine,
                    cap: cap.unwrap_or(self.index.default_cap).clamp(1, MAX_CAP),
                };
                metrics::gauge!(crate::metrics::LIVE_SUBSCRIBERS).increment(1);
                let version = watcher.want(|w| *w.views.entry(view.clone()).or_default() += 1);
                Subscription::new(
                    rx,
                    slot.clone(),
                    self.stop.clone(),
                    watcher.clone(),
                    view,
                    version,
                )
            })
            .collect();
        watcher.tell(Input::Wants);
        Ok(subs)
    }

    /// A place for one more stream of `viewer` in `ws`, or why there is none.
    fn open_stream(&self, ws: &Workspace, viewer: &UserId) -> Result<StreamSlot, Error> {
        let limits = self.config.limits;
        let mut open = self.streams.lock().expect("live lock");
        let in_ws = open.workspace.get(ws).copied().unwrap_or(0);
        let of_viewer = open
            .viewer
            .get(&(ws.clone(), viewer.clone()))
            .copied()
            .unwrap_or(0);
        if open.server >= limits.server {
            return Err(Error::TooManyStreams(open.server));
        }
        if in_ws >= limits.workspace || of_viewer >= limits.viewer {
            return Err(Error::TooManyStreamsHere {
                workspace: in_ws,
                viewer: of_viewer,
            });
        }
        open.server += 1;
        *open.workspace.entry(ws.clone()).or_default() += 1;
        *open.viewer.entry((ws.clone(), viewer.clone())).or_default() += 1;
        Ok(StreamSlot {
            streams: self.streams.clone(),
            ws: ws.clone(),
            viewer: viewer.clone(),
        })
    }

    /// A write went through this server: its watcher applies it now, and the other servers
    /// hear of it on the bus.
    pub fn wrote(self: &Arc<Self>, fact: Fact) {
        if let Some(bus) = &self.bus {
            bus.publish(&fact);
        }
        self.tell(&fact.ws.clone(), Input::Fact(fact));
    }

    fn tell(&self, ws: &Workspace, input: Input) {
        let watchers = self.watchers.lock().expect("live lock");
        if let Some(w) = watchers.get(ws) {
            w.tell(input);
        }
    }

    /// What the bus heard, handed to the watchers.
    async fn hear(self: Arc<Self>, mut rx: mpsc::Receiver<bus::Heard>) {
        while let Some(heard) = rx.recv().await {
            match heard {
                bus::Heard::Fact(fact) => self.tell(&fact.ws.clone(), Input::Fact(fact)),
                bus::Heard::Doubt(ws) => self.tell(&ws, Input::Doubt),
                bus::Heard::DoubtAll => {
                    let watchers = self.watchers.lock().expect("live lock");
                    for w in watchers.values() {
                        w.tell(Input::Doubt);
                    }
                }
                bus::Heard::Up(up) => {
                    metrics::gauge!(crate::metrics::LIVE_POLLING).set(if up { 0.0 } else { 1.0 });
                }
            }
        }
    }

    /// The watcher's loop: reconcile at start, then apply facts as they come, compute pages
    /// again each period (and after every change), reconcile as [`Live`] says; stop once
    /// nobody subscribes.
    async fn watch(self: Arc<Self>, w: Arc<Watcher>, mut input: mpsc::Receiver<Input>) {
        use tokio::time::Instant;
        let mut replica = Replica::new(&w.ws, &self.index);
        let mut reconciled: Result<(), String> = Err(String::new());
        // A full reconcile owed, and why: at start, and after a doubt (at most one per
        // `DOUBT_EVERY`, however many doubts arrive).
        let mut doubt: Option<&'static str> = Some("start");
        let mut last_full: Option<Instant> = None;
        // A fact the copy could not place (`Applied::Doubtful`): the store settles it.
        let mut recheck = false;
        let mut tick = tokio::time::interval(self.config.every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut period = tokio::time::interval(self.config.reconcile_every);
        period.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        period.tick().await;
        loop {
            if w.missed.swap(false, Ordering::SeqCst) {
                doubt = doubt.or(Some("doubt"));
            }
            let doubt_due = last_full.is_none_or(|t| t.elapsed() >= DOUBT_EVERY);
            if let (Some(why), true) = (doubt, doubt_due) {
                reconciled = self.reconcile(&w.ws, &mut replica, why, true).await;
                // A failed reconcile still owes its doubt: tried again in `DOUBT_EVERY`.
                if reconciled.is_ok() {
                    doubt = None;
                }
                recheck = false;
                last_full = Some(Instant::now());
            } else if recheck {
                reconciled = self.reconcile(&w.ws, &mut replica, "fact", false).await;
                recheck = false;
            }
            self.publish(&w, &replica, &reconciled).await;
            let doubt_at = doubt.and(last_full).map(|t| t + DOUBT_EVERY);
            tokio::select! {
                // Stopping: the streams end on their own; the watcher reads no more.
                () = self.stop.cancelled() => return,
                got = input.recv() => match got {
                    Some(Input::Fact(fact)) => {
                        recheck |= replica.apply(&fact).await == Applied::Doubtful;
                        // What else came meanwhile, at once (one page computation for a burst).
                        while let Ok(more) = input.try_recv() {
                            match more {
                                Input::Fact(fact) => {
                                    recheck |= replica.apply(&fact).await == Applied::Doubtful;
                                }
                                Input::Doubt => doubt = doubt.or(Some("doubt")),
                                Input::Wants => {}
                            }
                        }
                    }
                    Some(Input::Doubt) => doubt = doubt.or(Some("doubt")),
                    Some(Input::Wants) => {}
                    None => return,
                },
                () = tokio::time::sleep_until(doubt_at.unwrap_or_else(Instant::now)), if doubt_at.is_some() => {}
                _ = tick.tick() => {
                    // No bus (or it is down): the store is read each period, as before, but
                    // only what changed since the last listing.
                    if self.polling() || reconciled.is_err() {
                        let why = if reconciled.is_err() { "doubt" } else { "poll" };
                        reconciled = self.reconcile(&w.ws, &mut replica, why, false).await;
                    }
                }
                _ = period.tick() => {
                    if self.holds_the_lease(&w.ws).await {
                        reconciled = self.reconcile(&w.ws, &mut replica, "period", false).await;
                    }
                }
                () = w.tx.closed() => {
                    if self.retire(&w) {
                        return;
                    }
                }
            }
        }
    }

    /// Whether this server reconciles `ws` for all this period: while the bus is up, the
    /// holder of its lease does; when the lease cannot be asked for, this server does (an
    /// error is not "not mine"). While the bus is down every watcher polls anyway.
    async fn holds_the_lease(&self, ws: &Workspace) -> bool {
        let Some(bus) = self.bus.as_ref().filter(|b| b.is_up()) else {
            return false;
        };
        match bus.lease(ws, self.config.reconcile_every).await {
            Ok(mine) => mine,
            Err(e) => {
                tracing::warn!(%ws, error = %e, "live: the reconcile lease could not be asked for; reconciling here");
                true
            }
        }
    }

    /// Make the copy what the store holds; a drift found while facts drive the watchers is
    /// told to the others, who reconcile too.
    async fn reconcile(
        &self,
        ws: &Workspace,
        replica: &mut Replica,
        why: &'static str,
        full: bool,
    ) -> Result<(), String> {
        metrics::counter!(crate::metrics::LIVE_RECONCILES, "why" => why).increment(1);
        match replica.reconcile(&self.index, full).await {
            Ok(done) => {
                if done.drifted && why == "period" {
                    tracing::warn!(%ws, "live: the store differed from what the facts said; every server reconciles");
                    if let Some(bus) = &self.bus {
                        bus.doubt(ws);
                    }
                }
                Ok(())
            }
            Err(e) => {
                tracing::warn!(%ws, error = %e, "live: the store did not answer");
                Err(e.to_string())
            }
        }
    }

    /// Compute every view's page from the copy and hand the snapshot to the subscribers (who
    /// each send only what changed for them). What the copy's read finds dead is not deleted:
    /// the copy may hold what a fact said, and nothing is deleted in the store on a fact's word
    /// (reads of the store and the janitor prune; a dead item is on no page meanwhile).
    async fn publish(&self, w: &Watcher, replica: &Replica, reconciled: &Result<(), String>) {
        let wants = w.wants.lock().expect("live lock").clone();
        let pages = match reconciled {
            Err(e) if !e.is_empty() => Err(e.clone()),
            Err(_) => return,
            Ok(()) => {
                let mut pages = HashMap::new();
                for view in wants.views.keys() {
                    match replica.page(&view.viewer, view.filter(), view.cap).await {
                        Ok(read) => {
                            pages.insert(view.clone(), read.page);
                        }
                        // The copy is memory: this is a bug, not the store.
                        Err(e) => {
                            tracing::error!(ws = %w.ws, error = %e, "live: the copy could not be read")
                        }
                    }
                }
                Ok(pages)
            }
        };
        w.tx.send_if_modified(|old| {
            let changed = old.wants != wants.version || !same(&old.pages, &pages);
            if changed {
                *old = Arc::new(Snapshot {
                    wants: wants.version,
                    pages: Some(pages),
                });
            }
            changed
        });
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
}

/// Two snapshots that would give every subscriber the same page (`generated_at` aside).
fn same(
    old: &Option<Result<HashMap<View, RecentPage>, String>>,
    new: &Result<HashMap<View, RecentPage>, String>,
) -> bool {
    match (old, new) {
        (Some(Ok(a)), Ok(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(v, p)| b.get(v).is_some_and(|q| subscription::same_page(p, q)))
        }
        (Some(Err(_)), Err(_)) => true,
        _ => false,
    }
}

impl Watcher {
    /// Queue `input`; when the queue is full (a reconcile on a slow store), note that something
    /// was missed instead: the watcher then reconciles whole.
    fn tell(&self, input: Input) {
        if self.input.try_send(input).is_err() {
            self.missed.store(true, Ordering::SeqCst);
        }
    }

    fn want(&self, change: impl FnOnce(&mut Wants)) -> u64 {
        let mut wants = self.wants.lock().expect("live lock");
        change(&mut wants);
        wants.version += 1;
        wants.version
    }
}
