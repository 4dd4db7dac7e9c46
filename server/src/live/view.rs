//! What subscribers ask a watcher for ([`WantedPage`]s, counted in [`Wants`]), and the pages
//! it computes for them at one moment ([`Snapshot`]).

use super::subscription::same_page;
use crate::index::UserId;
use app::contract::{Filter, RecentPage};
use std::collections::{BTreeMap, HashMap};

/// One page a subscriber may ask for: whose, which filter, how many cards.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct WantedPage {
    pub(super) viewer: UserId,
    /// The "Mine" filter, else everyone's (`Filter` is a wire type: no order of its own).
    pub(super) mine: bool,
    pub(super) cap: u32,
}

impl WantedPage {
    pub(super) fn filter(&self) -> Filter {
        if self.mine {
            Filter::Mine
        } else {
            Filter::All
        }
    }
}

/// What the subscribers ask of a watcher. `version` moves on with every change, and a snapshot
/// says which version it was made for, so a new subscriber waits for one made with it in mind.
#[derive(Debug, Clone, Default)]
pub(super) struct Wants {
    pub(super) version: u64,
    /// Each page asked for, and by how many subscriptions.
    pub(super) pages: BTreeMap<WantedPage, usize>,
}

/// Each wanted page, as computed from the copy; `Err` while the store cannot be reconciled.
pub(super) type Pages = Result<HashMap<WantedPage, RecentPage>, String>;

/// The pages of every view asked for, computed from the copy at one moment.
#[derive(Debug, Default)]
pub(super) struct Snapshot {
    pub(super) wants: u64,
    /// `None` before the first reconcile.
    pub(super) pages: Option<Pages>,
}

/// Two snapshots that would give every subscriber the same page (`generated_at` aside).
pub(super) fn same(old: &Option<Pages>, new: &Pages) -> bool {
    match (old, new) {
        (Some(Ok(a)), Ok(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(v, p)| b.get(v).is_some_and(|q| same_page(p, q)))
        }
        (Some(Err(_)), Err(_)) => true,
        _ => false,
    }
}
