//! The server as its users reach it: the `pickup` binary and its HTTP API, in-process
//! (`pickup::app` with `oneshot`: `contract`) and as real `pickup serve` processes (the rest),
//! with real peers beside it (Redis, nginx, an identity provider's JWKS, libfaketime, the object
//! store emulators). One binary, so the server is linked once for all of them; each module is
//! one concern (`cargo test --test server live::` runs one).
//!
//! Tests that need the Azure or S3 emulator are named `azure…`/`s3…` (or sit in a module of that
//! name): `make test-rust` filters them out, `make test-backends` runs only them.

#[path = "../common/mod.rs"]
mod common;

mod accept;
mod bus;
mod bus_peers;
mod cli;
mod clocks;
mod contract;
mod demo;
mod docs;
mod dropped_connections;
mod hardening;
mod hardening_shutdown;
mod headers;
mod http_api;
mod items;
mod jwks;
mod live;
mod logs;
mod looks;
mod metrics;
mod openapi;
mod pins;
mod run;
mod run_process;
mod scale_out;
mod settings;
mod site;
