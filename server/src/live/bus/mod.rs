//! Facts between servers, on Redis (or Valkey) pub/sub: every write a server makes is
//! published, and every server's watchers apply what the others published without reading the
//! store. Pub/sub delivers at most once, so each message carries its sender's sequence number:
//! a gap (seen on the next message, or on the sender's heartbeat) or a reconnect makes the
//! watchers reconcile. While the bus is down, the watchers poll.
//!
//! A server that subscribes cannot tell, from a peer's first message, what of the peer's it
//! missed: so it joins before it counts on facts. It asks Redis how many listen, says hello
//! (every peer answers with a beat), and once it has heard them all (or `JOINING` passed)
//! tells the watchers to reconcile, and only then is up. A peer first heard while joining is
//! in order, as that reconcile comes after it; a peer first heard later, numbered past its
//! first message, is a gap.
//!
//! A peer is trusted no more than a request: every message is sealed with the servers' key
//! ([`super::seal`]) and dated, and a message that is not sealed, is dated outside the clock
//! skew, repeats a sequence number already heard, or carries a fact a request would be refused
//! for, is counted and changes nothing. Nothing a fact says deletes anything in the store.
//!
//! The bus is watched, not assumed: a server hears its own beats come back, and when they stop
//! (Redis stopped answering, the subscription silently died) it treats the bus as down and polls
//! until they come back.
//!
//! Its parts: `config` (`PICKUP_BUS` and what goes with it), `wire` (what a server publishes,
//! before it is sealed), `sequence` (how a message's number stands against its sender's last),
//! `listen` (the subscription, the publisher and the beats), `heard` (what a message heard
//! tells the watchers, once checked), `lease` (who reconciles a workspace for all),
//! `complaints` (log lines a peer could cause without end, bounded).

mod complaints;
mod config;
mod heard;
mod lease;
mod listen;
mod sequence;
mod wire;

pub(crate) use config::{redacted, BusConfig};

use super::fact::{Fact, WireFact};
use super::seal::BusKey;
use crate::index::{Index, Workspace};
use complaints::Complaints;
use sequence::Sender;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::mpsc;
use wire::{Envelope, Message};

/// Messages waiting to be published, at most: past it, one is dropped (its sequence number is
/// spent, so the peers see the gap and reconcile).
const OUTBOX: usize = 4096;

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
    /// Subscribed, and not yet told the watchers to reconcile for it: a peer first heard now
    /// is in order whatever its number (what it said before is in the store that reconcile
    /// lists). Ends once every peer has been heard, at most `JOINING` after subscribing.
    joining: AtomicBool,
    /// This server heard one of its own messages since it last subscribed.
    echoed: AtomicBool,
    /// When this server last answered a peer's hello: at most one answer per `ANSWER_EVERY`.
    answered: Mutex<Option<Instant>>,
    conn: tokio::sync::Mutex<Option<redis::aio::MultiplexedConnection>>,
    drop_every: u64,
    heard_count: AtomicU64,
    /// Something heard did not fit the watchers' queue: the next that fits is a reconcile.
    overflowed: AtomicBool,
    senders: Mutex<HashMap<String, Sender>>,
    complaints: Mutex<Complaints>,
    lease: redis::Script,
    release: redis::Script,
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
            joining: AtomicBool::new(false),
            echoed: AtomicBool::new(false),
            answered: Mutex::new(None),
            conn: tokio::sync::Mutex::new(None),
            drop_every: config.drop_every,
            heard_count: AtomicU64::new(0),
            overflowed: AtomicBool::new(false),
            senders: Mutex::default(),
            complaints: Mutex::new(Complaints::new()),
            lease: redis::Script::new(lease::LEASE),
            release: redis::Script::new(lease::RELEASE),
        }))
    }

    pub(super) fn is_up(&self) -> bool {
        self.up.load(Ordering::SeqCst)
    }

    /// Publish a fact for the other servers, after every fact this server published before.
    /// A failure is logged: they will see the gap in this server's sequence and reconcile, or
    /// are polling anyway while the bus is down.
    pub(super) fn publish(&self, fact: &Fact) {
        self.send(Message::Fact(Box::new(WireFact::from(fact))));
    }

    pub(super) fn doubt(&self, ws: &Workspace) {
        self.send(Message::Doubt { ws: ws.to_string() });
    }

    /// Numbered, sealed and queued under one lock, so the queue's order is the numbers' order.
    fn send(&self, body: Message) {
        let mut outbox = self.outbox.lock().expect("bus lock");
        let is_fact = matches!(body, Message::Fact(_));
        if !matches!(body, Message::Beat { .. }) {
            outbox.0 += 1;
        }
        let msg = serde_json::to_vec(&Envelope {
            from: self.me.clone(),
            seq: outbox.0,
            at: self.index.clock().now_ms(),
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
