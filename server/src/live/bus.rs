//! Facts between servers, on Redis (or Valkey) pub/sub: every write a server makes is
//! published, and every server's watchers apply what the others published without reading the
//! store. Pub/sub delivers at most once, so each message carries its sender's sequence number:
//! a gap (seen on the next message, or on the sender's heartbeat) or a reconnect makes the
//! watchers reconcile. While the bus is down, the watchers poll.
//!
//! A peer is trusted no more than a request: every message is sealed with the servers' key
//! ([`super::seal`]) and dated, and a message that is not sealed, is dated outside the clock
//! skew, repeats a sequence number already heard, or carries a fact a request would be refused
//! for, is counted and changes nothing. Nothing a fact says deletes anything in the store.
//!
//! The bus is watched, not assumed: a server hears its own beats come back, and when they stop
//! (Redis stopped answering, the subscription silently died) it treats the bus as down and polls
//! until they come back.

use super::fact::{Fact, WireFact};
use super::seal::{BusKey, SealError};
use crate::index::{Index, Workspace};
use futures::StreamExt;
use redis::AsyncCommands;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const CHANNEL: &str = "pickup:facts";
/// How often a server says how many facts it has published, so a peer that missed the last of
/// them learns it within this; and how often it checks that it hears itself.
const BEAT_EVERY: Duration = Duration::from_secs(2);
/// A server that has not heard its own beat back for this long treats the bus as down.
const DEAF_AFTER: Duration = Duration::from_secs(6);
/// After a lost connection, the next try waits this long (and at most this long again).
const RECONNECT_AFTER: Duration = Duration::from_millis(500);
/// Messages waiting to be published, at most: past it, one is dropped (its sequence number is
/// spent, so the peers see the gap and reconcile).
const OUTBOX: usize = 4096;
/// A message larger than this is refused unread (a record is at most a few KiB).
const MAX_MESSAGE: usize = 256 * 1024;
/// How far a message's date may be from this server's clock, beyond the clock skew: older, it
/// is a replay; a sender silent for longer than this is forgotten.
const DATED_WITHIN: Duration = Duration::from_secs(30);
/// Refusals and connection trouble are logged once a minute per sender (or per reason).
const COMPLAIN_EVERY: Duration = Duration::from_secs(60);
/// Senders a minute's refusals are logged for, at most (the rest are only counted).
const COMPLAINTS: usize = 64;

/// `PICKUP_BUS` and what goes with it.
#[derive(Clone)]
pub struct BusConfig {
    /// `redis://` or `rediss://` (TLS), with a password or an ACL user and password if any.
    pub url: String,
    /// The servers' shared key: from `PICKUP_SECRET`, or `PICKUP_BUS_KEY`.
    pub key: BusKey,
    /// PEM certificates to trust for a `rediss://` server (`PICKUP_BUS_CA`), instead of the
    /// system's.
    pub ca: Option<Vec<u8>>,
    /// Tests only: drop every n-th fact heard (0: none).
    pub drop_every: u64,
}

impl std::fmt::Debug for BusConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BusConfig")
            .field("url", &redacted(&self.url))
            .field("ca", &self.ca.as_ref().map(Vec::len))
            .field("drop_every", &self.drop_every)
            .finish_non_exhaustive()
    }
}

/// `url` with its password, if any, replaced: what may be printed.
pub fn redacted(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        Ok(u) => u.to_string(),
        Err(_) => "(not a URL)".into(),
    }
}

/// What a server publishes, before it is sealed.
#[derive(Debug, Serialize, Deserialize)]
struct Envelope {
    from: String,
    seq: u64,
    /// When it was sent, by the sender's clock (ms since the epoch): a replay is dated.
    at: u64,
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
    Doubt(Workspace),
    /// Reconcile everything: a message was missed, or the bus came back.
    DoubtAll,
    /// The bus went down (poll) or came back (`true`).
    Up(bool),
}

/// What is known of one sender: the last sequence number heard, and when.
#[derive(Debug, Clone, Copy)]
struct Sender {
    seq: u64,
    heard: Instant,
}

/// How a message's sequence number stands against its sender's last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sequence {
    /// The next one (or a sender's very first, or a beat that says no more).
    InOrder,
    /// Some were missed: reconcile.
    Gap,
    /// Heard already: a replay, or out of order.
    Replayed,
}

/// `seq` of a `beat` (which repeats the last number) or of a fact or doubt (which takes the
/// next), after `last`. No arithmetic that can overflow: a peer chooses these numbers.
fn sequence(last: Option<u64>, seq: u64, beat: bool) -> Sequence {
    let Some(last) = last else {
        // A sender heard for the first time that has said something before (a fact numbered
        // past the first, a beat past none): what it said may have been missed.
        let first = if beat { 0 } else { 1 };
        return if seq > first {
            Sequence::Gap
        } else {
            Sequence::InOrder
        };
    };
    match (beat, seq.cmp(&last)) {
        (true, std::cmp::Ordering::Less)
        | (false, std::cmp::Ordering::Less | std::cmp::Ordering::Equal) => Sequence::Replayed,
        (true, std::cmp::Ordering::Equal) => Sequence::InOrder,
        (true, std::cmp::Ordering::Greater) => Sequence::Gap,
        (false, std::cmp::Ordering::Greater) if seq - last == 1 => Sequence::InOrder,
        (false, std::cmp::Ordering::Greater) => Sequence::Gap,
    }
}

/// Log lines that a peer could cause without end, kept to one a minute per key.
#[derive(Debug)]
struct Complaints {
    since: Instant,
    said: HashSet<String>,
}

impl Complaints {
    fn new() -> Self {
        Complaints {
            since: Instant::now(),
            said: HashSet::new(),
        }
    }

    /// Whether to log about `key` now.
    fn allow(&mut self, key: &str) -> bool {
        if self.since.elapsed() >= COMPLAIN_EVERY {
            self.since = Instant::now();
            self.said.clear();
        }
        self.said.len() < COMPLAINTS && self.said.insert(key.to_string())
    }
}

/// Takes (or keeps) the lease when nobody else holds it, renewing it for its holder; a lease
/// that would outlast two periods (set by hand, with no expiry) is taken too. Answers who holds
/// it.
const LEASE: &str = r"
local held = redis.call('GET', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if held == ARGV[1] or not held or ttl < 0 or ttl > tonumber(ARGV[2]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return ARGV[1]
end
return held
";

pub(super) struct Bus {
    client: redis::Client,
    key: BusKey,
    /// Facts are checked against its clock and limits, as requests are at the door.
    index: Arc<Index>,
    me: String,
    /// The last sequence number given out, and the queue of messages in that order: one task
    /// publishes them, so peers hear them in sequence (a fact published by a task of its own
    /// could overtake an earlier one, and every overtaking would look like a gap).
    outbox: Mutex<(u64, mpsc::Sender<Vec<u8>>)>,
    unsent: Mutex<Option<mpsc::Receiver<Vec<u8>>>>,
    /// Subscribed to the channel.
    subscribed: AtomicBool,
    /// Subscribed, and hearing its own beats back: facts drive the watchers.
    up: AtomicBool,
    /// When this server last heard one of its own messages.
    heard_self: Mutex<Instant>,
    conn: tokio::sync::Mutex<Option<redis::aio::MultiplexedConnection>>,
    drop_every: u64,
    heard_count: AtomicU64,
    /// Something heard did not fit the watchers' queue: the next that fits is a reconcile.
    overflowed: AtomicBool,
    senders: Mutex<HashMap<String, Sender>>,
    complaints: Mutex<Complaints>,
    lease: redis::Script,
}

impl Bus {
    pub(super) fn new(config: &BusConfig, index: Arc<Index>) -> anyhow::Result<Arc<Bus>> {
        // Two TLS providers are in the build (object_store's and jsonwebtoken's): rustls needs
        // to be told which one a `rediss://` connection uses. An error means one was set.
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let shown = redacted(&config.url);
        let client = match &config.ca {
            Some(ca) => redis::Client::build_with_tls(
                config.url.as_str(),
                redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(ca.clone()),
                },
            ),
            None => redis::Client::open(config.url.as_str()),
        }
        .map_err(|e| anyhow::anyhow!("PICKUP_BUS {shown} is not a Redis URL: {e}"))?;
        let me = format!("{}-{:x}", std::process::id(), rand_u64());
        let (outbox, unsent) = mpsc::channel(OUTBOX);
        Ok(Arc::new(Bus {
            client,
            key: config.key.clone(),
            index,
            me,
            outbox: Mutex::new((0, outbox)),
            unsent: Mutex::new(Some(unsent)),
            subscribed: AtomicBool::new(false),
            up: AtomicBool::new(false),
            heard_self: Mutex::new(Instant::now()),
            conn: tokio::sync::Mutex::new(None),
            drop_every: config.drop_every,
            heard_count: AtomicU64::new(0),
            overflowed: AtomicBool::new(false),
            senders: Mutex::default(),
            complaints: Mutex::new(Complaints::new()),
            lease: redis::Script::new(LEASE),
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

    pub(super) fn doubt(&self, ws: &Workspace) {
        self.send(Body::Doubt { ws: ws.to_string() });
    }

    /// Numbered, sealed and queued under one lock, so the queue's order is the numbers' order.
    fn send(&self, body: Body) {
        let mut outbox = self.outbox.lock().expect("bus lock");
        let is_fact = matches!(body, Body::Fact(_));
        if !matches!(body, Body::Beat) {
            outbox.0 += 1;
        }
        let msg = serde_json::to_vec(&Envelope {
            from: self.me.clone(),
            seq: outbox.0,
            at: self.index.clock.now_ms(),
            body,
        })
        .expect("an envelope serialises");
        if outbox.1.try_send(self.key.seal(&msg)).is_err() {
            tracing::warn!("bus: too many messages waiting; one was dropped (peers reconcile)");
        } else if is_fact {
            metrics::counter!(crate::metrics::BUS_FACTS, "dir" => "published").increment(1);
        }
    }

    /// Log `what` at `warn`, once a minute per `key`.
    fn complain(&self, key: &str, what: impl FnOnce()) {
        if self.complaints.lock().expect("bus lock").allow(key) {
            what();
        }
    }

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

    /// Whether this server may reconcile `ws` for everyone this `period`: a lease on the bus,
    /// held by one server at a time and renewed by its holder each period (it lasts two, so a
    /// holder that renews a little late keeps it, and one that is gone loses it). An error is
    /// not "not mine": the caller reconciles then.
    pub(super) async fn lease(
        &self,
        ws: &Workspace,
        period: Duration,
    ) -> Result<bool, redis::RedisError> {
        let mut conn = self.connection().await.ok_or_else(|| {
            redis::RedisError::from((redis::ErrorKind::Io, "no connection to the bus"))
        })?;
        let holder: String = self
            .lease
            .key(format!("pickup:reconcile:{ws}"))
            .arg(&self.me)
            .arg((period.as_millis().max(1) as u64).saturating_mul(2))
            .invoke_async(&mut conn)
            .await?;
        // Another holder counts only if it is a server heard, sealed, lately: a name written
        // into Redis by anything else (or by a server with another key) does not stop this
        // one reconciling.
        Ok(holder == self.me || !self.senders.lock().expect("bus lock").contains_key(&holder))
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
    pub(super) async fn listen(self: Arc<Self>, tx: mpsc::Sender<Heard>, stop: CancellationToken) {
        let beats = {
            let (bus, stop, tx) = (self.clone(), stop.clone(), tx.clone());
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(BEAT_EVERY);
                loop {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        _ = tick.tick() => {
                            bus.send(Body::Beat);
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
                        self.subscribed.store(true, Ordering::SeqCst);
                        // The bus is up once this server hears itself: say so at once.
                        self.send(Body::Beat);
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
    fn tell(&self, tx: &mpsc::Sender<Heard>, heard: Heard) {
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

    fn window(&self) -> Duration {
        Duration::from_millis(self.index.limits.max_skew_ms) + DATED_WITHIN
    }

    fn refuse(&self, why: &'static str, from: &str, detail: impl std::fmt::Display) {
        metrics::counter!(crate::metrics::BUS_FACTS, "dir" => "refused").increment(1);
        metrics::counter!(crate::metrics::BUS_REFUSED, "why" => why).increment(1);
        self.complain(
            &format!("{why} {from}"),
            || tracing::warn!(why, from, %detail, "bus: a message was refused and changed nothing"),
        );
    }

    fn heard(&self, payload: &[u8], tx: &mpsc::Sender<Heard>) {
        if payload.len() > MAX_MESSAGE {
            return self.refuse("malformed", "?", format!("{} bytes", payload.len()));
        }
        let message = match self.key.open(payload) {
            Ok(message) => message,
            Err(e) => {
                let why = match e {
                    SealError::Unsealed => "unsealed",
                    SealError::BadTag => "bad_tag",
                };
                return self.refuse(why, "?", e);
            }
        };
        let envelope = match serde_json::from_slice::<Envelope>(message) {
            Ok(envelope) => envelope,
            Err(e) => return self.refuse("malformed", "?", e),
        };
        let from = envelope.from.as_str();
        // Dated, its own messages too: a replay is refused whoever it names.
        let now = self.index.clock.now_ms();
        if envelope.at.abs_diff(now) > self.window().as_millis() as u64 {
            return self.refuse(
                "stale",
                from,
                format!(
                    "dated {} ms from this server's clock",
                    envelope.at.abs_diff(now)
                ),
            );
        }
        if from == self.me {
            *self.heard_self.lock().expect("bus lock") = Instant::now();
            if self.subscribed.load(Ordering::SeqCst) && !self.up.swap(true, Ordering::SeqCst) {
                tracing::info!("bus: connected; live watchers follow facts");
                self.tell(tx, Heard::Up(true));
                // Whatever was published while we were away is lost: reconcile.
                self.tell(tx, Heard::DoubtAll);
            }
            return;
        }
        let is_fact = matches!(envelope.body, Body::Fact(_));
        if is_fact {
            let n = self.heard_count.fetch_add(1, Ordering::SeqCst) + 1;
            if self.drop_every > 0 && n.is_multiple_of(self.drop_every) {
                // A test's fault: this fact never arrived, as pub/sub may lose one.
                return;
            }
        }
        let order = {
            let mut senders = self.senders.lock().expect("bus lock");
            let last = senders.get(from).map(|s| s.seq);
            let order = sequence(last, envelope.seq, matches!(envelope.body, Body::Beat));
            if last.is_none() && order != Sequence::Replayed {
                metrics::gauge!(crate::metrics::BUS_PEERS).set(senders.len() as f64 + 1.0);
            }
            if order != Sequence::Replayed {
                senders.insert(
                    from.to_string(),
                    Sender {
                        seq: envelope.seq,
                        heard: Instant::now(),
                    },
                );
            }
            order
        };
        match order {
            Sequence::Replayed => {
                return self.refuse("replayed", from, format!("seq {}", envelope.seq))
            }
            Sequence::Gap => {
                metrics::counter!(crate::metrics::BUS_FACTS, "dir" => "gap").increment(1);
                self.tell(tx, Heard::DoubtAll);
            }
            Sequence::InOrder => {}
        }
        match envelope.body {
            Body::Beat => {}
            Body::Doubt { ws } => match Workspace::parse(&ws) {
                Ok(ws) => {
                    self.tell(tx, Heard::Doubt(ws));
                }
                Err(e) => self.refuse("invalid", from, e),
            },
            Body::Fact(wire) => match Fact::from_wire(*wire, &self.index) {
                Ok(fact) => {
                    metrics::counter!(crate::metrics::BUS_FACTS, "dir" => "heard").increment(1);
                    self.tell(tx, Heard::Fact(fact));
                }
                Err(e) => self.refuse("invalid", from, e),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_cannot_overflow_or_go_back() {
        use Sequence::*;
        assert_eq!(sequence(None, u64::MAX, false), Gap);
        assert_eq!(sequence(None, 1, false), InOrder);
        assert_eq!(sequence(None, 0, true), InOrder);
        assert_eq!(sequence(None, 3, true), Gap);
        assert_eq!(sequence(Some(u64::MAX), u64::MAX, false), Replayed);
        assert_eq!(sequence(Some(u64::MAX), 0, false), Replayed);
        assert_eq!(sequence(Some(u64::MAX), u64::MAX, true), InOrder);
        assert_eq!(sequence(Some(u64::MAX - 1), u64::MAX, false), InOrder);
        assert_eq!(sequence(Some(0), u64::MAX, false), Gap);
        assert_eq!(sequence(Some(5), 6, false), InOrder);
        assert_eq!(sequence(Some(5), 5, false), Replayed);
        assert_eq!(sequence(Some(5), 4, false), Replayed);
        assert_eq!(sequence(Some(5), 8, false), Gap);
        assert_eq!(sequence(Some(5), 5, true), InOrder);
        assert_eq!(sequence(Some(5), 6, true), Gap);
        assert_eq!(sequence(Some(5), 4, true), Replayed);
    }

    #[test]
    fn a_password_is_never_shown() {
        let shown = redacted("rediss://pickup:hunter2@redis.example:6380/0");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("redis.example:6380"), "{shown}");
        assert_eq!(redacted("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
        assert!(!redacted("redis://:s3cret@[::1").contains("s3cret"));
    }

    #[test]
    fn complaints_are_bounded_per_minute() {
        let mut c = Complaints::new();
        assert!(c.allow("a"));
        assert!(!c.allow("a"));
        for i in 0..COMPLAINTS * 2 {
            c.allow(&i.to_string());
        }
        assert_eq!(c.said.len(), COMPLAINTS);
    }
}
