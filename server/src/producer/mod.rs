//! The producer's side: commands that tell a Pickup server about work as it happens.
//!
//! [`client`] is the REST API as producers call it; [`item`] the one-call commands
//! (`pickup item …`); [`run`] wraps a command (`pickup run`), with [`reporter`] keeping the
//! server told beside it. Pure rules, tested alone: [`progress`] (progress lines and files,
//! throttling), [`outcome`] (exit status to item status), [`adopt`] (recognising a
//! registration whose answer was lost).

/// `eprintln!` that never panics. After a hang-up the terminal is gone and writing to it
/// fails; the wrapper must still finish the item.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod adopt;
mod client;
pub(crate) mod item;
mod outcome;
mod progress;
mod reporter;
mod run;

pub(crate) use client::Client;
pub(crate) use reporter::{Item, Timing};
pub(crate) use run::run;
