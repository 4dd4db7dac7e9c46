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
/// How long after subscribing a peer first heard has joined rather than left a gap: every live
/// peer beats within one period, and half a period more covers its delivery.
pub(super) const JOINING: Duration = Duration::from_millis(3000);
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
                            bus.send(Message::Beat);
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
                        *self.joined.lock().expect("bus lock") = Instant::now();
                        self.subscribed.store(true, Ordering::SeqCst);
                        // The bus is up once this server hears itself: say so at once.
                        self.send(Message::Beat);
                        let mut messages = pubsub.on_message();
                        let mut deaf = tokio::time::interval(BEAT_EVERY);
                        loop {
                            tokio::select! {
                                () = stop.cancelled() => break,
                                msg = messages.next() => match msg {
                                    Some(msg) => self.heard(msg.get_payload_bytes(), &tx),
                                    None => break,
                                },
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
