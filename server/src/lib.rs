//! Pickup's server: the marker index and everything around it.
//!
//! Pure logic, tested without a store: [`names`], [`id`], [`plan`], [`verdict`], [`record`].
//! Store I/O: [`store`] (the only code that speaks object_store), [`index`] (write and read
//! paths), [`cache`] (reads shared by concurrent requests), [`janitor`], [`live`] (one watcher
//! per workspace for every live stream).
//! Around them: [`auth`] (and [`jwks`], the identity provider's keys), [`service`] (every operation, for both doors), [`http`], [`site`] (the widget's
//! files: precompressed, cached by name), [`serve`]
//! (the accept loop: timeouts, connection cap, shutdown deadline), [`cli`].
//! The producer's side: [`producer`] (`pickup run` and `pickup item`, over the REST API).

pub mod auth;
pub mod cache;
pub mod cli;
pub mod clock;
pub mod demo;
pub mod error;
pub mod http;
pub mod id;
pub mod index;
pub mod janitor;
pub mod jwks;
pub mod live;
pub mod logs;
pub mod metrics;
pub mod names;
pub mod openapi;
pub mod plan;
pub mod producer;
pub mod record;
pub mod serve;
pub mod service;
pub mod site;
pub mod store;
pub mod verdict;
