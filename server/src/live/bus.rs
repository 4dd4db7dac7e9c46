//! Facts between servers, on Redis (or Valkey) pub/sub: every write a server makes is
//! published, and every server's watchers apply what the others published without reading the
//! store. Pub/sub delivers at most once, so each message carries its sender's sequence number:
//! a gap (seen on the next message, or on the sender's heartbeat) or a reconnect makes the
//! watchers reconcile. While the bus is down, the watchers poll.

use super::fact::{Fact, WireFact};
use futures::StreamExt;
use redis::AsyncCommands;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const CHANNEL: &str = "pickup:facts";
/// How often a server says how many facts it has published, so a peer that missed the last of
/// them learns it within this.
const BEAT_EVERY: Duration = Duration::from_secs(2);
/// After a lost connection, the next try waits this long (and at most this long again).
const RECONNECT_AFTER: Duration = Duration::from_millis(500);
/// Messages waiting to be published, at most: past it, one is dropped (its sequence number is
/// spent, so the peers see the gap and reconcile).
const OUTBOX: usize = 4096;

/// What a server publishes.
#[derive(Debug, Serialize, Deserialize)]
struct Envelope {
    from: String,
    seq: u64,
    #[serde(flatten)]
    body: Body,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Body {
    Fact(Box<WireFact>),
    /// "I have published `seq` messages": nothing to apply.
    Beat,
    /// "The store's copy of this workspace differs from what the facts said": reconcile.
    Doubt {
        ws: String,
    },
}

/// What the bus tells the watchers.
#[derive(Debug)]
pub(super) enum Heard {
    Fact(Fact),
    /// Reconcile this workspace (a peer found it drifted).
    Doubt(crate::index::Workspace),
    /// Reconcile everything: a message was missed, or the connection came back.
    DoubtAll,
    /// The bus went down (poll) or came back (`true`).
    Up(bool),
}

pub(super) struct Bus {
    client: redis::Client,
    me: String,
    /// The last sequence number given out, and the queue of messages in that order: one task
    /// publishes them, so peers hear them in sequence (a fact published by a task of its own
    /// could overtake an earlier one, and every overtaking would look like a gap).
    outbox: Mutex<(u64, mpsc::Sender<Vec<u8>>)>,
    unsent: Mutex<Option<mpsc::Receiver<Vec<u8>>>>,
    up: AtomicBool,
    conn: tokio::sync::Mutex<Option<redis::aio::MultiplexedConnection>>,
    /// Faults injected by tests: drop every n-th fact heard (0: none).
    drop_every: u64,
    heard_count: AtomicU64,
    last_seen: Mutex<HashMap<String, u64>>,
}

impl Bus {
    pub(super) fn new(url: &str, drop_every: u64) -> anyhow::Result<Arc<Bus>> {
        let client = redis::Client::open(url)
            .map_err(|e| anyhow::anyhow!("PICKUP_BUS {url:?} is not a Redis URL: {e}"))?;
        let me = format!("{}-{:x}", std::process::id(), rand_u64());
        let (outbox, unsent) = mpsc::channel(OUTBOX);
        Ok(Arc::new(Bus {
            client,
            me,
            outbox: Mutex::new((0, outbox)),
            unsent: Mutex::new(Some(unsent)),
            up: AtomicBool::new(false),
            conn: tokio::sync::Mutex::new(None),
            drop_every,
            heard_count: AtomicU64::new(0),
            last_seen: Mutex::default(),
        }))
    }

    pub(super) fn is_up(&self) -> bool {
        self.up.load(Ordering::SeqCst)
    }

    /// Publish a fact for the other servers, after every fact this server published before.
    /// A failure is logged: they will see the gap in this server's sequence and reconcile, or
    /// are polling anyway while the bus is down.
    pub(super) fn publish(&self, fact: &Fact) {
        self.send(Body::Fact(Box::new(WireFact::from(fact))));
    }

    pub(super) fn doubt(&self, ws: &crate::index::Workspace) {
        self.send(Body::Doubt { ws: ws.to_string() });
    }

    /// Numbered and queued under one lock, so the queue's order is the numbers' order.
    fn send(&self, body: Body) {
        let mut outbox = self.outbox.lock().expect("bus lock");
        let is_fact = matches!(body, Body::Fact(_));
        if !matches!(body, Body::Beat) {
            outbox.0 += 1;
        }
        let msg = serde_json::to_vec(&Envelope {
            from: self.me.clone(),
            seq: outbox.0,
            body,
        })
        .expect("an envelope serialises");
        if outbox.1.try_send(msg).is_err() {
            tracing::warn!("bus: too many messages waiting; one was dropped (peers reconcile)");
        } else if is_fact {
            metrics::counter!(crate::metrics::BUS_FACTS, "dir" => "published").increment(1);
        }
    }

    /// Publish what is queued, in order. While the bus is down it is dropped, not held: the
    /// peers reconcile on the gap, and a fact published late would only mislead them.
    async fn publish_queued(&self, mut unsent: mpsc::Receiver<Vec<u8>>, stop: CancellationToken) {
        loop {
            let msg = tokio::select! {
                () = stop.cancelled() => return,
                msg = unsent.recv() => match msg { Some(msg) => msg, None => return },
            };
            if !self.is_up() {
                continue;
            }
            let Some(mut conn) = self.connection().await else {
                continue;
            };
            if let Err(e) = conn.publish::<_, _, ()>(CHANNEL, msg).await {
                tracing::warn!(error = %e, "bus: a fact could not be published");
                *self.conn.lock().await = None;
            }
        }
    }

    /// Whether this server may reconcile `ws` for everyone for the next `period`: a lease on
    /// the bus, taken by one server at a time. No bus, no lease (every server polls then).
    pub(super) async fn lease(&self, ws: &crate::index::Workspace, period: Duration) -> bool {
        let Some(mut conn) = self.connection().await else {
            return false;
        };
        let taken: redis::RedisResult<Option<String>> = redis::cmd("SET")
            .arg(format!("pickup:reconcile:{ws}"))
            .arg(&self.me)
            .arg("NX")
            .arg("PX")
            .arg(period.as_millis().max(1) as u64)
            .query_async(&mut conn)
            .await;
        matches!(taken, Ok(Some(_)))
    }

    async fn connection(&self) -> Option<redis::aio::MultiplexedConnection> {
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
                    tracing::debug!(error = %e, "bus: no connection");
                    return None;
                }
            }
        }
        held.clone()
    }

    /// Listen until `stop`: every message another server published goes to `tx`; a lost
    /// connection is retried, and its loss and return are said too.
    pub(super) async fn listen(
        self: Arc<Self>,
        tx: mpsc::UnboundedSender<Heard>,
        stop: CancellationToken,
    ) {
        let beats = {
            let bus = self.clone();
            let stop = stop.clone();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(BEAT_EVERY);
                loop {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        _ = tick.tick() => bus.send(Body::Beat),
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
                Ok(mut pubsub) => {
                    if pubsub.subscribe(CHANNEL).await.is_ok() {
                        self.last_seen.lock().expect("bus lock").clear();
                        self.up.store(true, Ordering::SeqCst);
                        tracing::info!("bus: connected; live watchers follow facts");
                        let _ = tx.send(Heard::Up(true));
                        // Whatever was published while we were away is lost: reconcile.
                        let _ = tx.send(Heard::DoubtAll);
                        let mut messages = pubsub.on_message();
                        loop {
                            tokio::select! {
                                () = stop.cancelled() => break,
                                msg = messages.next() => match msg {
                                    Some(msg) => self.heard(msg.get_payload_bytes(), &tx),
                                    None => break,
                                },
                            }
                        }
                    }
                }
                Err(e) => tracing::debug!(error = %e, "bus: cannot subscribe"),
            }
            if self.up.swap(false, Ordering::SeqCst) {
                tracing::warn!(
                    "bus: connection lost; live watchers poll the store until it is back"
                );
                let _ = tx.send(Heard::Up(false));
            }
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

    fn heard(&self, payload: &[u8], tx: &mpsc::UnboundedSender<Heard>) {
        let Ok(envelope) = serde_json::from_slice::<Envelope>(payload) else {
            metrics::counter!(crate::metrics::BUS_FACTS, "dir" => "refused").increment(1);
            return;
        };
        if envelope.from == self.me {
            return;
        }
        if matches!(envelope.body, Body::Fact(_)) {
            let n = self.heard_count.fetch_add(1, Ordering::SeqCst) + 1;
            if self.drop_every > 0 && n.is_multiple_of(self.drop_every) {
                // A test's fault: this fact never arrived, as pub/sub may lose one.
                return;
            }
        }
        let gap = {
            let mut seen = self.last_seen.lock().expect("bus lock");
            let last = seen.insert(envelope.from.clone(), envelope.seq);
            match (&envelope.body, last) {
                // A sender heard for the first time: what it said before is covered by the
                // reconcile of our own (re)connection.
                (_, None) => false,
                (Body::Beat, Some(last)) => envelope.seq != last,
                (_, Some(last)) => envelope.seq != last + 1,
            }
        };
        if gap {
            metrics::counter!(crate::metrics::BUS_FACTS, "dir" => "gap").increment(1);
            let _ = tx.send(Heard::DoubtAll);
        }
        match envelope.body {
            Body::Beat => {}
            Body::Doubt { ws } => {
                if let Ok(ws) = crate::index::Workspace::parse(&ws) {
                    let _ = tx.send(Heard::Doubt(ws));
                }
            }
            Body::Fact(wire) => match Fact::try_from(*wire) {
                Ok(fact) => {
                    metrics::counter!(crate::metrics::BUS_FACTS, "dir" => "heard").increment(1);
                    let _ = tx.send(Heard::Fact(fact));
                }
                Err(e) => {
                    metrics::counter!(crate::metrics::BUS_FACTS, "dir" => "refused").increment(1);
                    tracing::warn!(error = %e, "bus: a fact that is not one was ignored");
                }
            },
        }
    }
}

fn rand_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    h.finish()
}
