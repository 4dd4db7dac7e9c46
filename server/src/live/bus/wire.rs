//! What a server publishes on the bus, before it is sealed.

use super::WireFact;
use serde::{Deserialize, Serialize};

/// What a server publishes, before it is sealed.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Envelope {
    pub(super) from: String,
    pub(super) seq: u64,
    /// When it was sent, by the sender's clock (ms since the epoch): a replay is dated.
    pub(super) at: u64,
    #[serde(flatten)]
    pub(super) body: Message,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(super) enum Message {
    Fact(Box<WireFact>),
    /// "I have published `seq` messages": nothing to apply. A `hello` is a server's first beat
    /// after it subscribed, which every peer answers with a beat of its own at once, so the
    /// newcomer need not wait a beat period to hear them (its join waits for them). Older
    /// servers read it as a plain beat.
    Beat {
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        hello: bool,
    },
    /// "The store's copy of this workspace differs from what the facts said": reconcile.
    Doubt {
        ws: String,
    },
}
