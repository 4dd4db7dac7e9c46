//! This server's watchers ([`Live`]): one per workspace with subscribers, started by the first
//! and retired after the last; what a write through this server, or the bus, tells them.

use super::bus::{self, Bus, BusConfig, Heard};
use super::fact::Fact;
use super::streams::{StreamLimits, Streams};
use super::subscription::Subscription;
use super::view::{Snapshot, WantedPage};
use super::watcher::{Input, Watcher, QUEUE};
use crate::error::Error;
use crate::index::{Index, UserId, Workspace};
use app::contract::{Cap, Filter};
use std::collections::HashMap;
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
    /// How often one server reconciles a workspace for all, while the bus is up and facts
    /// come.
    pub reconcile_every: Duration,
    /// The longest a workspace with no fact waits between reconciles (each quiet period
    /// doubles the next, from `reconcile_every`).
    pub reconcile_ceiling: Duration,
    /// `PICKUP_BUS` (`redis://…` or `rediss://…`): facts between servers.
    pub bus: Option<BusConfig>,
    pub limits: StreamLimits,
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
    pub(super) index: Arc<Index>,
    pub(super) config: LiveConfig,
    watchers: Mutex<HashMap<Workspace, Arc<Watcher>>>,
    /// Cancelled on shutdown: every stream ends, telling its client to reconnect elsewhere.
    pub(super) stop: CancellationToken,
    streams: Arc<Mutex<Streams>>,
    pub(super) bus: Option<Arc<Bus>>,
    /// The bus said it is up, after it told the watchers then running to doubt their copies.
    heard_up: AtomicBool,
    came_up: tokio::sync::Notify,
}

impl Live {
    pub fn new(index: Arc<Index>, config: LiveConfig) -> anyhow::Result<Arc<Self>> {
        let bus = match &config.bus {
            Some(bus) => Some(Bus::new(bus, index.clone())?),
            None => None,
        };
        let live = Arc::new(Live {
            index,
            config,
            watchers: Mutex::default(),
            stop: CancellationToken::new(),
            streams: Arc::default(),
            bus,
            heard_up: AtomicBool::new(false),
            came_up: tokio::sync::Notify::new(),
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

    /// Waits, at most `within`, until facts on the bus drive the watchers (at once without a
    /// bus); answers whether they do. A server that takes streams before then starts their
    /// watchers polling the store, and each reconciles in full once the bus is up (facts
    /// published meanwhile went unheard): after a restart, every stream it had comes back at
    /// once, and that was most of the restart's store cost.
    pub async fn on_the_bus(&self, within: Duration) -> bool {
        if self.bus.is_none() {
            return true;
        }
        let up = async {
            loop {
                let told = self.came_up.notified();
                tokio::pin!(told);
                // Registered before the check, so a change between the two is not missed.
                told.as_mut().enable();
                if self.heard_up.load(Ordering::SeqCst) {
                    return;
                }
                told.await;
            }
        };
        tokio::time::timeout(within, up).await.is_ok()
    }

    pub(super) fn polling(&self) -> bool {
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
        let slot = Arc::new(Streams::open(
            &self.streams,
            self.config.limits,
            ws,
            viewer,
        )?);
        let mut watchers = self.watchers.lock().expect("live lock");
        let watcher = watchers
            .entry(ws.clone())
            .or_insert_with(|| self.start_watcher(ws))
            .clone();
        // Subscribed under the lock, so the watcher cannot retire between lookup and here.
        let receivers: Vec<_> = views.iter().map(|_| watcher.tx.subscribe()).collect();
        metrics::gauge!(crate::metrics::LIVE_WATCHERS).set(watchers.len() as f64);
        drop(watchers);
        let subs = views
            .iter()
            .zip(receivers)
            .map(|(&(filter, cap), rx)| {
                let page = WantedPage {
                    viewer: viewer.clone(),
                    mine: filter == Filter::Mine,
                    cap: Cap::judge(cap, Cap::clamped(self.index.default_cap())).get(),
                };
                metrics::gauge!(crate::metrics::LIVE_SUBSCRIBERS).increment(1);
                let version = watcher.want(|w| *w.pages.entry(page.clone()).or_default() += 1);
                Subscription::new(
                    rx,
                    slot.clone(),
                    self.stop.clone(),
                    watcher.clone(),
                    page,
                    version,
                )
            })
            .collect();
        watcher.tell(Input::Wants);
        Ok(subs)
    }

    /// A watcher of `ws`, its loop running.
    fn start_watcher(self: &Arc<Self>, ws: &Workspace) -> Arc<Watcher> {
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
    }

    /// A write went through this server: its watcher applies it now, and the other servers
    /// hear of it on the bus.
    pub fn announce(self: &Arc<Self>, fact: Fact) {
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
                Heard::Fact(fact) => self.tell(&fact.ws.clone(), Input::Fact(fact)),
                Heard::Doubt(ws) => self.tell(&ws, Input::Doubt),
                Heard::DoubtAll => {
                    let watchers = self.watchers.lock().expect("live lock");
                    for w in watchers.values() {
                        w.tell(Input::Doubt);
                    }
                }
                Heard::Up(up) => {
                    metrics::gauge!(crate::metrics::LIVE_POLLING).set(if up { 0.0 } else { 1.0 });
                    self.heard_up.store(up, Ordering::SeqCst);
                    if up {
                        self.came_up.notify_waiters();
                    }
                }
            }
        }
    }

    /// Stop watching if nobody subscribes (checked under the lock `subscribe` takes).
    pub(super) fn retire(&self, w: &Arc<Watcher>) -> bool {
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
