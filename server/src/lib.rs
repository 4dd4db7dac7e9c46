//! Pickup's server. Its parts, each a folder with a face (its `mod.rs`):
//!
//! - `index`: the marker index: the pure core, the store (the only code that speaks
//!   object_store, reached through the index's face), the read cache, the write and read
//!   paths, the janitor, the in-memory copy a live watcher keeps;
//! - `live`: one watcher per watched workspace, shared by every live stream of it, and the
//!   bus that carries facts between servers;
//! - `service`: every operation of Pickup, called by all three doors alike;
//! - `auth`: tokens (HS256 and an identity provider's), who the caller is and may do what;
//! - `http`: the doors (REST routes, live streams, the widget's server functions, the site);
//! - `producer`: the producer's client (`pickup run`, `pickup item`), over the REST API.
//!
//! Around them: `wiring` builds a whole server from a [`Config`] ([`app`]), `serve` runs it
//! (`pickup serve`), [`cli`] turns flags into one, `error` is the one error enum the doors
//! answer with, `metrics` and `logs` are the operators' view, `demo` seeds `make run`'s
//! workspace, `peer` bounds and neutralises what a peer sends back.
//!
//! Reachable from outside: what the `pickup` binary needs ([`cli`]), what the benchmarks need
//! ([`index`]'s face), and the whole server in-process ([`app`]), which tests call as a router.
#![warn(unreachable_pub)]

pub mod cli;
pub mod index;

mod auth;
mod demo;
mod error;
mod http;
mod live;
mod logs;
mod metrics;
mod peer;
mod producer;
mod serve;
mod service;
#[cfg(test)]
mod testing;
mod wiring;

pub use wiring::{app, App, Config};
