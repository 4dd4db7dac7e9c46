//! Test helpers: the backends, a fault-injecting store wrapper, a GCS-like generations store, a
//! naive shared-list comparator, a TCP proxy that records each request, the one HTTP client of the
//! tests, the app in-process, the `pickup serve` harness, and builders.
#![allow(dead_code)]

pub mod backends;
pub mod client;
pub mod fault;
pub mod generations;
pub mod in_process;
pub mod live_view;
pub mod naive;
pub mod proxy;
pub mod redis;
pub mod server;
pub mod stream;
pub mod wait;

use app::contract::{NewItem, Owner, Status};
use pickup::index::Producer;
use pickup::index::Workspace;

/// 2027-01-15, so test ids are realistic.
pub const T0: u64 = 1_800_000_000_000;
pub const HOUR: u64 = 3_600_000;

pub fn ws() -> Workspace {
    Workspace::parse("acme").unwrap()
}

pub fn owner(sub: &str) -> Owner {
    Owner {
        sub: sub.into(),
        name: sub.to_uppercase(),
    }
}

/// `sub` as the producer of what it registers (named as [`owner`] names it).
pub fn producer(sub: &str) -> Producer {
    Producer {
        user: pickup::index::UserId::parse(sub).unwrap(),
        name: sub.to_uppercase(),
    }
}

pub fn new_item(key: &str, status: Status) -> NewItem {
    NewItem {
        key: key.into(),
        title: format!("item {key}"),
        url: None,
        status: Some(status),
        progress: None,
    }
}

// (store helpers: being rewritten on the scen branch)
