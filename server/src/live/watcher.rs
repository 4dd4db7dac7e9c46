//! One watcher: the copy of one workspace, the loop that keeps it (facts as they come, doubts,
//! reconciles by period or lease), and the pages it publishes to its subscribers.

use super::cadence::Cadence;
use super::fact::Fact;
use super::replica::{Applied, Replica};
use super::view::{same, Pages, Snapshot, WantedPage, Wants};
use super::watchers::Live;
use crate::index::{Index, Workspace};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// A doubt heard within this of a watcher's last full reconcile waits until this has passed:
/// however many doubts peers send (or gaps the bus shows), a watcher reads its workspace whole
/// at most once in this.
const DOUBT_EVERY: Duration = Duration::from_secs(5);

/// Facts and doubts waiting for one watcher (or for the watchers, from the bus), at most.
pub(super) const QUEUE: usize = 4096;

/// What a watcher is told.
pub(super) enum Input {
    Fact(Fact),
    /// Reconcile now, reading every record again (the copy may have missed a fact).
    Doubt,
    /// A subscriber came or went: compute the pages asked for.
    Wants,
}

pub(super) struct Watcher {
    pub(super) ws: Workspace,
    pub(super) tx: watch::Sender<Arc<Snapshot>>,
    /// Bounded: what does not fit sets `missed`, and the watcher reconciles whole.
    pub(super) input: mpsc::Sender<Input>,
    pub(super) missed: AtomicBool,
    pub(super) wants: Mutex<Wants>,
}

impl Watcher {
    /// Queue `input`; when the queue is full (a reconcile on a slow store), note that something
    /// was missed instead: the watcher then reconciles whole.
    pub(super) fn tell(&self, input: Input) {
        if self.input.try_send(input).is_err() {
            self.missed.store(true, Ordering::SeqCst);
        }
    }

    pub(super) fn want(&self, change: impl FnOnce(&mut Wants)) -> u64 {
        let mut wants = self.wants.lock().expect("live lock");
        change(&mut wants);
        wants.version += 1;
        wants.version
    }
}

/// What a watcher's loop carries from one turn to the next.
struct Kept {
    replica: Replica,
    /// `Err("")` before the first reconcile; `Err(why)` while the store cannot be reconciled.
    reconciled: Result<(), String>,
    /// A full reconcile owed, and why: at start, and after a doubt (at most one per
    /// `DOUBT_EVERY`, however many doubts arrive).
    doubt: Option<&'static str>,
    last_full: Option<Instant>,
    /// A fact the copy could not place (`Applied::Doubtful`): the store settles it.
    recheck: bool,
    /// How long until the next reconcile by period.
    cadence: Cadence,
    /// A fact or a doubt since the last period: the workspace was not quiet.
    stirred: bool,
    /// The cadence went back to its base: the next period is due sooner than planned.
    sooner: bool,
    /// When the pages were last computed, and the first instant (the index's clock, ms) at
    /// which one may change by time alone (`Replica::next_change_ms`).
    computed: Instant,
    turns_at: Option<u64>,
}

/// The longest a watcher with nothing to do goes without computing its pages again, whatever
/// `Replica::next_change_ms` says: it knows the records held, and a belt beside it costs little.
const COMPUTE_AT_LEAST: Duration = Duration::from_secs(60);

impl Kept {
    fn new(ws: &Workspace, index: &Index, cadence: Cadence) -> Self {
        Kept {
            replica: Replica::new(ws, index),
            reconciled: Err(String::new()),
            doubt: Some("start"),
            last_full: None,
            recheck: false,
            cadence,
            stirred: false,
            sooner: false,
            computed: Instant::now(),
            turns_at: None,
        }
    }

    /// After a tick with nothing else to do: whether a page may have changed by time alone
    /// since it was computed. Computing every page of every watcher each tick was most of an
    /// idle server's CPU (1,000 watched workspaces, make bench-scale).
    fn time_has_come(&self, now_ms: u64) -> bool {
        self.turns_at.is_some_and(|t| now_ms >= t) || self.computed.elapsed() >= COMPUTE_AT_LEAST
    }

    fn doubt(&mut self) {
        self.doubt = self.doubt.or(Some("doubt"));
        self.stir();
    }

    fn stir(&mut self) {
        self.stirred = true;
        self.sooner |= self.cadence.stirred();
    }

    async fn apply(&mut self, fact: &Fact) {
        self.stir();
        self.recheck |= self.replica.apply(fact).await == Applied::Doubtful;
    }

    /// What the queue holds: a fact, and what else came meanwhile, at once (one page
    /// computation for a burst); a doubt.
    async fn take(&mut self, first: Input, input: &mut mpsc::Receiver<Input>) {
        match first {
            Input::Fact(fact) => {
                self.apply(&fact).await;
                while let Ok(more) = input.try_recv() {
                    match more {
                        Input::Fact(fact) => self.apply(&fact).await,
                        Input::Doubt => self.doubt(),
                        Input::Wants => {}
                    }
                }
            }
            Input::Doubt => self.doubt(),
            Input::Wants => {}
        }
    }
}

impl Live {
    /// The watcher's loop: reconcile at start, then apply facts as they come, compute pages
    /// again each period (and after every change), reconcile as [`Live`] says; stop once
    /// nobody subscribes.
    pub(super) async fn watch(self: Arc<Self>, w: Arc<Watcher>, mut input: mpsc::Receiver<Input>) {
        let cadence = Cadence::new(self.config.reconcile_every, self.config.reconcile_ceiling);
        let mut kept = Kept::new(&w.ws, &self.index, cadence);
        let mut tick = tokio::time::interval(self.config.every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut period_ends = Instant::now() + kept.cadence.period();
        // The first tick is now, and the start's reconcile is its: polling at once after it
        // would list the workspace a second time for nothing.
        tick.tick().await;
        // Woken by the tick alone: the pages are computed again only if time may change them.
        let mut ticked = false;
        loop {
            if w.missed.swap(false, Ordering::SeqCst) {
                kept.doubt();
            }
            if std::mem::take(&mut kept.sooner) {
                period_ends = period_ends.min(Instant::now() + kept.cadence.period());
            }
            let quiet = std::mem::take(&mut ticked) && kept.doubt.is_none() && !kept.recheck;
            self.settle_doubts(&w.ws, &mut kept).await;
            let now_ms = self.index.clock().now_ms();
            if !quiet || kept.time_has_come(now_ms) {
                self.publish(&w, &mut kept).await;
                kept.computed = Instant::now();
                kept.turns_at = kept.replica.next_change_ms(now_ms, &self.index.limits());
            }
            let doubt_at = kept.doubt.and(kept.last_full).map(|t| t + DOUBT_EVERY);
            tokio::select! {
                // Stopping: the streams end on their own; the watcher reads no more.
                () = self.stop.cancelled() => return,
                got = input.recv() => match got {
                    Some(first) => kept.take(first, &mut input).await,
                    None => return,
                },
                () = tokio::time::sleep_until(doubt_at.unwrap_or_else(Instant::now)), if doubt_at.is_some() => {}
                _ = tick.tick() => {
                    // No bus (or it is down): the store is read each period, as before, but
                    // only what changed since the last listing.
                    if self.polling() || kept.reconciled.is_err() {
                        let why = if kept.reconciled.is_err() { "doubt" } else { "poll" };
                        kept.reconciled = self.reconcile(&w.ws, &mut kept.replica, why, false).await.map(|_| ());
                    } else {
                        ticked = true;
                    }
                }
                () = tokio::time::sleep_until(period_ends) => {
                    self.period_ended(&w.ws, &mut kept).await;
                    period_ends = Instant::now() + kept.cadence.period();
                }
                () = w.tx.closed() => {
                    if self.retire(&w) {
                        if let Some(bus) = &self.bus {
                            bus.release(&w.ws).await;
                        }
                        return;
                    }
                }
            }
        }
    }

    /// The end of a period: its lease holder reconciles; a period with no fact and no doubt,
    /// whose reconcile (if this server made it) found nothing amiss, makes the next longer.
    async fn period_ended(&self, ws: &Workspace, kept: &mut Kept) {
        let quiet = !std::mem::take(&mut kept.stirred);
        if self.holds_the_lease(ws, kept.cadence.period()).await {
            let done = self.reconcile(ws, &mut kept.replica, "period", false).await;
            let amiss = done.as_ref().map_or(true, |drifted| *drifted);
            kept.reconciled = done.map(|_| ());
            if amiss {
                kept.stir();
                return;
            }
        }
        if quiet {
            kept.cadence.quiet();
        }
    }

    /// A full reconcile owed and due (at most one per `DOUBT_EVERY`), else the store's word on
    /// a fact the copy could not place.
    async fn settle_doubts(&self, ws: &Workspace, kept: &mut Kept) {
        let doubt_due = kept.last_full.is_none_or(|t| t.elapsed() >= DOUBT_EVERY);
        if let (Some(why), true) = (kept.doubt, doubt_due) {
            kept.reconciled = self
                .reconcile(ws, &mut kept.replica, why, true)
                .await
                .map(|_| ());
            // A failed reconcile still owes its doubt: tried again in `DOUBT_EVERY`.
            if kept.reconciled.is_ok() {
                kept.doubt = None;
            }
            kept.recheck = false;
            kept.last_full = Some(Instant::now());
        } else if kept.recheck {
            kept.reconciled = self
                .reconcile(ws, &mut kept.replica, "fact", false)
                .await
                .map(|_| ());
            kept.recheck = false;
        }
    }

    /// Whether this server reconciles `ws` for all this `period`: while the bus is up, the
    /// holder of its lease does; when the lease cannot be asked for, this server does (an
    /// error is not "not mine"). While the bus is down every watcher polls anyway.
    async fn holds_the_lease(&self, ws: &Workspace, period: Duration) -> bool {
        let Some(bus) = self.bus.as_ref().filter(|b| b.is_up()) else {
            return false;
        };
        match bus.lease(ws, period, self.config.reconcile_ceiling).await {
            Ok(mine) => mine,
            Err(e) => {
                tracing::warn!(%ws, error = %e, "live: the reconcile lease could not be asked for; reconciling here");
                true
            }
        }
    }

    /// Make the copy what the store holds; a drift found while facts drive the watchers is
    /// told to the others, who reconcile too. Answers whether the copy had drifted.
    async fn reconcile(
        &self,
        ws: &Workspace,
        replica: &mut Replica,
        why: &'static str,
        full: bool,
    ) -> Result<bool, String> {
        metrics::counter!(crate::metrics::LIVE_RECONCILES, "why" => why).increment(1);
        match replica.reconcile(&self.index, full).await {
            Ok(done) => {
                if done.drifted && why == "period" {
                    tracing::warn!(%ws, "live: the store differed from what the facts said; every server reconciles");
                    if let Some(bus) = &self.bus {
                        bus.doubt(ws);
                    }
                }
                Ok(done.drifted)
            }
            Err(e) => {
                tracing::warn!(%ws, error = %e, "live: the store did not answer");
                Err(e.to_string())
            }
        }
    }

    /// Compute every wanted page from the copy (reading the records they need that it has not
    /// read) and hand the snapshot to the subscribers (who each send only what changed for
    /// them). What the copy's read finds dead is not deleted: the copy may hold what a fact
    /// said, and nothing is deleted in the store on a fact's word (reads of the store and the
    /// janitor prune; a dead item is on no page meanwhile).
    async fn publish(&self, w: &Watcher, kept: &mut Kept) {
        let wants = w.wants.lock().expect("live lock").clone();
        let pages: Pages = match &kept.reconciled {
            Err(e) if !e.is_empty() => Err(e.clone()),
            Err(_) => return,
            Ok(()) => {
                let wanted: Vec<WantedPage> = wants.pages.keys().cloned().collect();
                match kept.replica.pages(&self.index, &wanted).await {
                    Ok(pages) => Ok(pages),
                    // As a failed reconcile: every page says the store did not answer (none
                    // goes without a card it needs), and the next turn lists it again.
                    Err(e) => {
                        tracing::warn!(ws = %w.ws, error = %e, "live: a record a page needs could not be read");
                        kept.reconciled = Err(e.to_string());
                        kept.stir();
                        Err(e.to_string())
                    }
                }
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
}

#[cfg(test)]
mod tests {
    use super::super::requests::counting;
    use crate::index::{Index, Limits, ManualClock, Producer, UserId, Workspace};
    use crate::live::{Event, Live, LiveConfig, StreamLimits};
    use app::contract::{Filter, NewItem, Status};
    use std::sync::Arc;
    use std::time::Duration;

    const NOW: u64 = 1_800_000_000_000;

    /// What a watcher's start costs the store, for a workspace of `items` items and one view
    /// of `cap` cards: (listings, record reads, cards on the first page). Nothing but the start
    /// can ask the store anything here: the watcher polls once an hour, and the count ends
    /// with the first page.
    fn start(items: u64, cap: Option<u32>) -> (u64, u64, usize) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let ws = Workspace::parse("acme").unwrap();
        let clock = Arc::new(ManualClock::new(NOW));
        let index = Index::open(
            "memory://",
            Limits::default(),
            app::contract::DEFAULT_CAP,
            clock,
        )
        .unwrap();
        let ada = Producer {
            user: UserId::parse("ada").unwrap(),
            name: "Ada".into(),
        };
        rt.block_on(async {
            for i in 0..items {
                let new = NewItem {
                    key: format!("k{i}"),
                    title: "t".into(),
                    status: Some(Status::Running),
                    ..NewItem::default()
                };
                let at = index
                    .clone()
                    .with_clock(Arc::new(ManualClock::new(NOW - i)));
                at.register(&ws, &new, &ada).await.unwrap();
            }
        });
        let config = LiveConfig {
            every: Duration::from_secs(3600),
            reconcile_every: Duration::from_secs(3600),
            reconcile_ceiling: Duration::from_secs(3600),
            bus: None,
            limits: StreamLimits {
                server: 4,
                workspace: 4,
                viewer: 4,
            },
        };
        counting(|requests| {
            rt.block_on(async {
                let live = Live::new(Arc::new(index), config).unwrap();
                let mut subs = live
                    .subscribe(&ws, &ada.user, &[(Filter::All, cap)])
                    .unwrap();
                let Some(Event::Page(page)) = subs[0].next().await else {
                    panic!("no first page");
                };
                live.stop();
                (requests.of("list"), requests.of("get"), page.cards.len())
            })
        })
    }

    /// A watcher starts with one listing and reads the records its page shows, not every
    /// record of the workspace (50 reads before, and a second listing when polling).
    #[test]
    fn a_watcher_starts_with_one_listing_and_the_reads_of_its_page() {
        assert_eq!(start(50, Some(10)), (1, 10, 10), "a page of 10");
        let default = app::contract::DEFAULT_CAP;
        assert_eq!(
            start(50, None),
            (1, u64::from(default), default as usize),
            "a page of the default cap"
        );
    }

    /// A reconcile lists the workspace once (`ws/{ws}/`, every kind of key in one listing), not
    /// once per kind: without a bus a watched workspace is reconciled every PICKUP_LIVE_EVERY,
    /// and nothing else lists the store while nobody writes. Time is paused: the ticks pass as
    /// fast as the watcher takes them.
    #[test]
    fn a_reconcile_is_one_listing_of_the_workspace() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap();
        let ws = Workspace::parse("acme").unwrap();
        let clock = Arc::new(ManualClock::new(NOW));
        let index = Index::open("memory://", Limits::default(), 8, clock).unwrap();
        let ada = Producer {
            user: UserId::parse("ada").unwrap(),
            name: "Ada".into(),
        };
        rt.block_on(async {
            for key in ["a", "b"] {
                let new = NewItem {
                    key: key.into(),
                    title: "t".into(),
                    status: Some(Status::Running),
                    ..NewItem::default()
                };
                let id = index.register(&ws, &new, &ada).await.unwrap().id;
                if key == "a" {
                    let id = crate::index::ItemId::parse(&id).unwrap();
                    index.dismiss(&ws, &ada.user, &id).await.unwrap();
                }
            }
        });
        let config = LiveConfig {
            every: Duration::from_millis(50),
            reconcile_every: Duration::from_secs(3600),
            reconcile_ceiling: Duration::from_secs(3600),
            bus: None,
            limits: StreamLimits {
                server: 4,
                workspace: 4,
                viewer: 4,
            },
        };
        let (listed, reconciles) = counting(|requests| {
            rt.block_on(async {
                let live = Live::new(Arc::new(index), config).unwrap();
                let mut subs = live
                    .subscribe(&ws, &ada.user, &[(Filter::All, None)])
                    .unwrap();
                let Some(Event::Page(page)) = subs[0].next().await else {
                    panic!("no first page");
                };
                assert_eq!(page.cards.len(), 1, "b, a dismissed");
                while requests.total(crate::metrics::LIVE_RECONCILES) < 20 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                live.stop();
                (
                    requests.of("list"),
                    requests.total(crate::metrics::LIVE_RECONCILES),
                )
            })
        });
        assert!(
            listed.abs_diff(reconciles) <= 1,
            "{listed} listings in {reconciles} reconciles"
        );
    }

    /// A reconcile lists only the keys a page is made of (issue 47.6): beside 50 items (a
    /// marker, an owner marker and a record each), the looks of the 1,000 viewers the
    /// workspace ever had are not listed, so a reconcile costs what its items cost, whoever
    /// looked. (Listed with the workspace, they were 1,000 of every reconcile's 1,150 keys, and
    /// on S3 a second LIST request.)
    #[test]
    fn a_reconcile_lists_no_look() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap();
        let ws = Workspace::parse("acme").unwrap();
        let clock = Arc::new(ManualClock::new(NOW));
        let index = Index::open("memory://", Limits::default(), 8, clock).unwrap();
        let ada = Producer {
            user: UserId::parse("ada").unwrap(),
            name: "Ada".into(),
        };
        rt.block_on(async {
            for i in 0..50u64 {
                let new = NewItem {
                    key: format!("k{i}"),
                    title: "t".into(),
                    status: Some(Status::Running),
                    ..NewItem::default()
                };
                let at = index
                    .clone()
                    .with_clock(Arc::new(ManualClock::new(NOW - i)));
                at.register(&ws, &new, &ada).await.unwrap();
            }
            for i in 0..1_000 {
                let viewer = UserId::parse(&format!("viewer-{i}")).unwrap();
                index.look(&ws, &viewer, chrono::Utc::now()).await.unwrap();
            }
        });
        let config = LiveConfig {
            every: Duration::from_millis(50),
            reconcile_every: Duration::from_secs(3600),
            reconcile_ceiling: Duration::from_secs(3600),
            bus: None,
            limits: StreamLimits {
                server: 4,
                workspace: 4,
                viewer: 4,
            },
        };
        let (listings, keys) = counting(|requests| {
            rt.block_on(async {
                let live = Live::new(Arc::new(index), config).unwrap();
                let mut subs = live
                    .subscribe(&ws, &ada.user, &[(Filter::All, None)])
                    .unwrap();
                let Some(Event::Page(page)) = subs[0].next().await else {
                    panic!("no first page");
                };
                assert_eq!(page.cards.len(), 8);
                while requests.total(crate::metrics::LIVE_RECONCILES) < 5 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                live.stop();
                (
                    requests.of("list"),
                    requests.total(crate::metrics::STORE_KEYS_LISTED),
                )
            })
        });
        assert!(listings >= 5, "{listings} listings");
        assert_eq!(keys, 150 * listings, "{keys} keys in {listings} listings");
    }
}
