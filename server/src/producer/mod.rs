//! The producer's side: commands that tell a Pickup server about work as it happens.
//!
//! [`client`] is the REST API as producers call it; [`item`] the one-call commands
//! (`pickup item …`); [`run`] wraps a command (`pickup run`), with [`reporter`] keeping the
//! server told beside it. Pure rules, tested alone: [`progress`] (progress lines and files,
//! throttling), [`outcome`] (exit status to item status), [`adopt`] (recognising a
//! registration whose answer was lost). [`Console`] is where the commands write.

mod adopt;
mod client;
mod console;
pub(crate) mod item;
mod outcome;
mod progress;
mod reporter;
mod run;

pub(crate) use client::Client;
pub use console::Console;
pub(crate) use reporter::{Item, Timing};
pub(crate) use run::run;
