//! A message heard on the bus: opened (sealed with the servers' key), checked (dated within
//! the window, in its sender's sequence, a fact a request would be taken for), and handed to
//! the watchers. What fails a check is counted and changes nothing.

use super::sequence::{sequence, Sender, Sequence};
use super::wire::{Envelope, Message};
use super::{Bus, Heard};
use crate::index::Workspace;
use crate::live::fact::Fact;
use crate::live::seal::SealError;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// A message larger than this is refused unread (a record is at most a few KiB).
const MAX_MESSAGE: usize = 256 * 1024;
/// How far a message's date may be from this server's clock, beyond the clock skew: older, it
/// is a replay; a sender silent for longer than this is forgotten.
const DATED_WITHIN: Duration = Duration::from_secs(30);

impl Bus {
    pub(super) fn window(&self) -> Duration {
        Duration::from_millis(self.index.limits().max_skew_ms) + DATED_WITHIN
    }

    fn refuse(&self, why: &'static str, from: &str, detail: impl std::fmt::Display) {
        metrics::counter!(crate::metrics::BUS_FACTS, "dir" => "refused").increment(1);
        metrics::counter!(crate::metrics::BUS_REFUSED, "why" => why).increment(1);
        self.complain(
            &format!("{why} {from}"),
            || tracing::warn!(why, from, %detail, "bus: a message was refused and changed nothing"),
        );
    }

    pub(super) fn heard(&self, payload: &[u8], tx: &mpsc::Sender<Heard>) {
        let Some(envelope) = self.open(payload) else {
            return;
        };
        let Envelope {
            from,
            seq,
            at,
            body,
        } = envelope;
        // Dated, its own messages too: a replay is refused whoever it names.
        let now = self.index.clock().now_ms();
        if at.abs_diff(now) > self.window().as_millis() as u64 {
            let off = at.abs_diff(now);
            return self.refuse(
                "stale",
                &from,
                format!("dated {off} ms from this server's clock"),
            );
        }
        if from == self.me {
            return self.heard_itself(tx);
        }
        if matches!(body, Message::Fact(_)) && self.drops_this_fact() {
            return;
        }
        match self.order(&from, seq, matches!(body, Message::Beat { .. })) {
            Sequence::Replayed => return self.refuse("replayed", &from, format!("seq {seq}")),
            Sequence::Gap => {
                metrics::counter!(crate::metrics::BUS_FACTS, "dir" => "gap").increment(1);
                self.tell(tx, Heard::DoubtAll);
            }
            Sequence::InOrder => {}
        }
        self.hand_on(body, &from, tx);
    }

    /// The envelope a payload seals, or `None` (refused: too large, not sealed with the
    /// servers' key, not an envelope).
    fn open(&self, payload: &[u8]) -> Option<Envelope> {
        if payload.len() > MAX_MESSAGE {
            self.refuse("malformed", "?", format!("{} bytes", payload.len()));
            return None;
        }
        let message = match self.key.open(payload) {
            Ok(message) => message,
            Err(e) => {
                let why = match e {
                    SealError::Unsealed => "unsealed",
                    SealError::BadTag => "bad_tag",
                };
                self.refuse(why, "?", e);
                return None;
            }
        };
        match serde_json::from_slice::<Envelope>(message) {
            Ok(envelope) => Some(envelope),
            Err(e) => {
                self.refuse("malformed", "?", e);
                None
            }
        }
    }

    /// One of this server's own messages came back: the bus is up, if it was not and the
    /// join is over (else the join's end brings it up).
    fn heard_itself(&self, tx: &mpsc::Sender<Heard>) {
        *self.heard_self.lock().expect("bus lock") = Instant::now();
        self.echoed.store(true, Ordering::SeqCst);
        if !self.joining.load(Ordering::SeqCst) {
            self.come_up(tx);
        }
    }

    /// Whether a test's fault drops this fact: it never arrived, as pub/sub may lose one.
    fn drops_this_fact(&self) -> bool {
        let n = self.heard_count.fetch_add(1, Ordering::SeqCst) + 1;
        self.drop_every > 0 && n.is_multiple_of(self.drop_every)
    }

    /// How `seq` stands against what `from` said last; the sender is remembered unless it is
    /// a replay.
    fn order(&self, from: &str, seq: u64, beat: bool) -> Sequence {
        let mut senders = self.senders.lock().expect("bus lock");
        let last = senders.get(from).map(|s| s.seq);
        let joining = self.joining.load(Ordering::SeqCst);
        let order = sequence(last, seq, beat, joining);
        if last.is_none() && order != Sequence::Replayed {
            metrics::gauge!(crate::metrics::BUS_PEERS).set(senders.len() as f64 + 1.0);
        }
        if order != Sequence::Replayed {
            senders.insert(
                from.to_string(),
                Sender {
                    seq,
                    heard: Instant::now(),
                },
            );
        }
        order
    }

    /// What a peer's message says, to the watchers, once it passes what a request would.
    fn hand_on(&self, body: Message, from: &str, tx: &mpsc::Sender<Heard>) {
        match body {
            Message::Beat { hello: false } => {}
            Message::Beat { hello: true } => self.answer(),
            Message::Doubt { ws } => match Workspace::parse(&ws) {
                Ok(ws) => {
                    self.tell(tx, Heard::Doubt(ws));
                }
                Err(e) => self.refuse("invalid", from, e),
            },
            Message::Fact(wire) => match Fact::from_wire(*wire, &self.index) {
                Ok(fact) => {
                    metrics::counter!(crate::metrics::BUS_FACTS, "dir" => "heard").increment(1);
                    self.tell(tx, Heard::Fact(fact));
                }
                Err(e) => self.refuse("invalid", from, e),
            },
        }
    }
}
