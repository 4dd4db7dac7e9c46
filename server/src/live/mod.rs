//! Live pages: one watcher per watched workspace per server, shared by every viewer subscribed
//! to it, driven by changes rather than by the clock.
//!
//! A watcher holds a copy of the workspace ([`replica`]) and computes each subscriber's page
//! from it with the index's own read path, so a live page is the page `GET /recent` gives.
//! - A write through this server updates the copy from the write itself ([`Fact`]), and is
//!   published on the bus ([`bus`], `PICKUP_BUS`), whose facts other servers apply the same way.
//! - Changes that come from time alone (a heartbeat going stale, a finished item passing
//!   keep-finished, a grace period ending) are computed from the copy at the first
//!   `PICKUP_LIVE_EVERY` tick after a record's verdict is due to turn, and at least every
//!   minute; an idle watcher computes nothing in between.
//! - The store is listed only to reconcile the copy: by the one server holding the workspace's
//!   lease on the bus, every `PICKUP_RECONCILE_EVERY` while facts come and less and less often
//!   while none does (up to `PICKUP_RECONCILE_CEILING`, [`cadence`]); at once after a gap or a
//!   reconnect on the bus or an error; every `PICKUP_LIVE_EVERY` while there is no bus (or it is
//!   down).
//! - A page is sent to a subscriber only when its content changed; a joining subscriber gets
//!   the current page and nobody else hears of it.
//!
//! The parts, each a file named for its concept:
//! - `watchers`: [`Live`], this server's watchers, and how they are driven ([`Mode`]);
//! - `watcher`: one watcher and its loop (facts, doubts, reconciles, the pages it publishes);
//! - `cadence`: how often a watcher reconciles by period (quiet workspaces less often);
//! - `view`: the pages subscribers ask a watcher for, and the snapshot it hands them;
//! - `streams`: the open streams, counted against [`StreamLimits`];
//! - `subscription`: one viewer's [`Subscription`] and the frames of its stream;
//! - `replica`: a watcher's copy of its workspace; `fact`: what a write changed;
//! - `bus` and `seal`: facts between servers, sealed with the servers' [`BusKey`].

mod bus;
mod cadence;
mod fact;
mod replica;
#[cfg(test)]
mod requests;
mod seal;
mod streams;
mod subscription;
#[cfg(test)]
mod tests;
mod view;
mod watcher;
mod watchers;

pub(crate) use bus::{redacted, BusConfig};
pub(crate) use fact::{Change, Fact};
pub(crate) use seal::BusKey;
pub(crate) use streams::StreamLimits;
pub(crate) use subscription::{Event, Frame, Recheck, Rechecks, Subscription};
pub(crate) use watchers::{Live, LiveConfig, Mode};
