//! Pickup's server, in five parts, each a folder with a face (its `mod.rs`) and nothing
//! reachable behind it:
//!
//! - [`index`]: the marker index: the pure core, the store (the only code that speaks
//!   object_store, reached through the index's face), the read cache, the write and read
//!   paths, the janitor, the in-memory copy a live watcher keeps;
//! - [`live`]: one watcher per watched workspace, shared by every live stream of it, and the
//!   bus that carries facts between servers;
//! - [`service`]: [`service::Pickup`], every operation of Pickup, called by all three doors
//!   alike;
//! - [`http`]: the doors (REST routes, live streams, the widget's server functions), the
//!   token checks, the site, the accept loop;
//! - [`producer`]: the producer's client (`pickup run`, `pickup item`), over the REST API.
//!
//! Around them: [`wiring`] builds a whole server from a [`Config`] ([`app`]), [`cli`] turns
//! flags into one, [`error`] is the one error enum the doors answer with, [`metrics`] and
//! [`logs`] are the operators' view, [`demo`] seeds `make run`'s workspace, [`peer`] bounds
//! and neutralises what a peer sends back.
#![warn(unreachable_pub)]

pub mod auth;
pub mod cli;
pub mod demo;
pub mod error;
pub mod http;
pub mod index;
pub mod live;
pub mod logs;
pub mod metrics;
pub mod peer;
pub mod producer;
pub mod serve;
pub mod service;
pub mod wiring;

pub use wiring::{app, App, Config};
