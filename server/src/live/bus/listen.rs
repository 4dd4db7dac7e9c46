//! The bus as a connection: the subscription (retried when lost), the task that publishes what
//! is queued in order, the beats that tell whether this server hears itself.

use super::wire::Message;
use super::{Bus, Heard};
use futures::StreamExt;
use redis::AsyncCommands;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const CHANNEL: &str = "pickup:facts";
/// How often a server says how many facts it has published, so a peer that missed the last of
/// them learns it within this; and how often it checks that it hears itself.
const BEAT_EVERY: Duration = Duration::from_secs(2);
/// The longest a join waits to hear every peer: each answers a hello at once, and beats within
/// one period anyway; half a period more covers its delivery. A peer first heard later than
/// the join is judged by its sequence number.
const JOINING: Duration = Duration::from_millis(3000);
/// A server answers peers' hellos at most this often: a burst of servers joining (or a replayed
/// hello) costs one beat.
const ANSWER_EVERY: Duration = Duration::from_millis(250);
/// A server that has not heard its own beat back for this long treats the bus as down.
const DEAF_AFTER: Duration = Duration::from_secs(6);
/// After a lost connection, the next try waits this long (and at most this long again).
const RECONNECT_AFTER: Duration = Duration::from_millis(500);

impl Bus {
    /// Publish what is queued, in order. While not subscribed it is dropped, not held: the
    /// peers reconcile on the gap, and a fact published late would only mislead them.
    async fn publish_queued(&self, mut unsent: mpsc::Receiver<Vec<u8>>, stop: CancellationToken) {
        loop {
            let msg = tokio::select! {
                () = stop.cancelled() => return,
                msg = unsent.recv() => match msg { Some(msg) => msg, None => return },
            };
            if !self.subscribed.load(Ordering::SeqCst) {
                continue;
            }
            let Some(mut conn) = self.connection().await else {
                continue;
            };
            if let Err(e) = conn.publish::<_, _, ()>(CHANNEL, msg).await {
                self.complain(
                    "publish",
                    || tracing::warn!(error = %e, "bus: a message could not be published"),
                );
                *self.conn.lock().await = None;
            }
        }
    }

    pub(super) async fn connection(&self) -> Option<redis::aio::MultiplexedConnection> {
        let mut held = self.conn.lock().await;
        if held.is_none() {
            let config = redis::AsyncConnectionConfig::new()
                .set_connection_timeout(Some(Duration::from_secs(2)))
                .set_response_timeout(Some(Duration::from_secs(2)));
            match self
                .client
                .get_multiplexed_async_connection_with_config(&config)
                .await
            {
                Ok(c) => *held = Some(c),
                Err(e) => {
                    self.complain(
                        "connect",
                        || tracing::warn!(error = %e, "bus: cannot connect to Redis"),
                    );
                    return None;
                }
            }
        }
        held.clone()
    }

    /// Listen until `stop`: every message another server published goes to `tx`; a lost
    /// connection is retried, and its loss and return are said too.
    pub(in crate::live) async fn listen(
        self: Arc<Self>,
        tx: mpsc::Sender<Heard>,
        stop: CancellationToken,
    ) {
        let beats = {
            let (bus, stop, tx) = (self.clone(), stop.clone(), tx.clone());
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(BEAT_EVERY);
                loop {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        _ = tick.tick() => {
                            bus.send(Message::Beat { hello: false });
                            bus.watch_itself(&tx);
                            bus.forget_the_silent();
                        }
                    }
                }
            })
        };
        let unsent = self.unsent.lock().expect("bus lock").take();
        let publisher = unsent.map(|unsent| {
            let (bus, stop) = (self.clone(), stop.clone());
            tokio::spawn(async move { bus.publish_queued(unsent, stop).await })
        });
        loop {
            if stop.is_cancelled() {
                break;
            }
            match self.client.get_async_pubsub().await {
                Ok(mut pubsub) => match pubsub.subscribe(CHANNEL).await {
                    Ok(()) => {
                        self.senders.lock().expect("bus lock").clear();
                        *self.heard_self.lock().expect("bus lock") = Instant::now();
                        self.echoed.store(false, Ordering::SeqCst);
                        self.joining.store(true, Ordering::SeqCst);
                        self.subscribed.store(true, Ordering::SeqCst);
                        let peers = self.peers_listening().await;
                        self.send(Message::Beat { hello: true });
                        let join_ends = tokio::time::sleep(JOINING);
                        tokio::pin!(join_ends);
                        let mut messages = pubsub.on_message();
                        let mut deaf = tokio::time::interval(BEAT_EVERY);
                        loop {
                            // Here, between two messages, so that every peer this join trusted
                            // was heard before the reconcile it tells the watchers of.
                            if self.joining.load(Ordering::SeqCst) && self.heard_all(peers) {
                                self.joined(&tx);
                            }
                            tokio::select! {
                                () = stop.cancelled() => break,
                                msg = messages.next() => match msg {
                                    Some(msg) => self.heard(msg.get_payload_bytes(), &tx),
                                    None => break,
                                },
                                () = &mut join_ends, if self.joining.load(Ordering::SeqCst) => {
                                    self.joined(&tx);
                                }
                                // A subscription that hears nothing of its own (a half-open
                                // socket after a failover) is given up and made again.
                                _ = deaf.tick() => if self.is_deaf() { break },
                            }
                        }
                    }
                    Err(e) => self.complain("subscribe", || {
                        tracing::warn!(error = %e, "bus: cannot subscribe; live watchers poll the store")
                    }),
                },
                Err(e) => self.complain("subscribe", || {
                    tracing::warn!(error = %e, "bus: cannot connect to Redis; live watchers poll the store")
                }),
            }
            self.subscribed.store(false, Ordering::SeqCst);
            self.down(&tx, "connection lost");
            *self.conn.lock().await = None;
            tokio::select! {
                () = stop.cancelled() => break,
                () = tokio::time::sleep(RECONNECT_AFTER) => {}
            }
        }
        beats.abort();
        if let Some(publisher) = publisher {
            publisher.abort();
        }
    }

    /// How many other subscribers the channel has (Redis's `PUBSUB NUMSUB`, this server's own
    /// subscription made): the peers a join waits to hear. `None` when Redis does not say: the
    /// join then lasts `JOINING`.
    async fn peers_listening(&self) -> Option<usize> {
        let mut conn = self.connection().await?;
        let numsub: Result<(String, usize), _> = redis::cmd("PUBSUB")
            .arg("NUMSUB")
            .arg(CHANNEL)
            .query_async(&mut conn)
            .await;
        match numsub {
            Ok((_, n)) => Some(n.saturating_sub(1)),
            Err(e) => {
                tracing::debug!(error = %e, "bus: PUBSUB NUMSUB refused; a join lasts {JOINING:?}");
                None
            }
        }
    }

    /// Whether this server has heard itself and `peers` others since it subscribed.
    fn heard_all(&self, peers: Option<usize>) -> bool {
        self.echoed.load(Ordering::SeqCst)
            && peers.is_some_and(|n| self.senders.lock().expect("bus lock").len() >= n)
    }

    /// The join is over: a peer first heard from now on is judged by its number. The watchers
    /// reconcile (told after every peer the join trusted was heard, so that reconcile lists
    /// what those peers said before), then facts drive them; a server that has not heard
    /// itself yet is up once it does.
    fn joined(&self, tx: &mpsc::Sender<Heard>) {
        if self.joining.swap(false, Ordering::SeqCst) && self.echoed.load(Ordering::SeqCst) {
            self.come_up(tx);
        }
    }

    /// The bus is up, if it was not. Whatever was published while this server was away is lost:
    /// reconcile. Told before `Up`, so that once `Up` is heard every watcher that may have
    /// missed a fact has been told (`Live::on_the_bus`).
    pub(super) fn come_up(&self, tx: &mpsc::Sender<Heard>) {
        if self.subscribed.load(Ordering::SeqCst) && !self.up.swap(true, Ordering::SeqCst) {
            tracing::info!("bus: connected; live watchers follow facts");
            self.tell(tx, Heard::DoubtAll);
            self.tell(tx, Heard::Up(true));
        }
    }

    /// A peer said hello: a beat, at once (at most one per `ANSWER_EVERY`), so that it hears
    /// this server without waiting for its next beat.
    pub(super) fn answer(&self) {
        let mut answered = self.answered.lock().expect("bus lock");
        if answered.is_none_or(|at| at.elapsed() >= ANSWER_EVERY) {
            *answered = Some(Instant::now());
            drop(answered);
            self.send(Message::Beat { hello: false });
        }
    }

    /// Hand `heard` to the watchers. Their queue is bounded: when it is full (the watchers
    /// are stuck on a slow store), what does not fit is dropped, and the next that fits is a
    /// reconcile of everything, so nothing dropped is lost for good.
    pub(super) fn tell(&self, tx: &mpsc::Sender<Heard>, heard: Heard) {
        if self.overflowed.swap(false, Ordering::SeqCst) && tx.try_send(Heard::DoubtAll).is_err() {
            self.overflowed.store(true, Ordering::SeqCst);
            return;
        }
        if tx.try_send(heard).is_err() {
            self.overflowed.store(true, Ordering::SeqCst);
        }
    }

    fn down(&self, tx: &mpsc::Sender<Heard>, why: &str) {
        if self.up.swap(false, Ordering::SeqCst) {
            tracing::warn!(
                why,
                "bus: down; live watchers poll the store until it is back"
            );
            self.tell(tx, Heard::Up(false));
        }
    }

    /// A server that no longer hears its own beats is deaf (Redis stopped answering, or the
    /// subscription died without a word): the bus is down for it.
    fn watch_itself(&self, tx: &mpsc::Sender<Heard>) {
        if self.is_deaf() {
            self.down(tx, "this server's own beats did not come back");
        }
    }

    fn is_deaf(&self) -> bool {
        self.heard_self.lock().expect("bus lock").elapsed() > DEAF_AFTER
    }

    /// Senders not heard for longer than a replay could be dated are forgotten, so peers that
    /// come and go cost nothing for good.
    fn forget_the_silent(&self) {
        // A message dated `window` ahead of this clock is taken for `window` after that too:
        // its sender is kept as long, or a replay of it would pass as first heard.
        let kept = self.window() * 2;
        let mut senders = self.senders.lock().expect("bus lock");
        senders.retain(|_, s| s.heard.elapsed() <= kept);
        metrics::gauge!(crate::metrics::BUS_PEERS).set(senders.len() as f64);
    }
}
