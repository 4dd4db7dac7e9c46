//! The pure core of the read path: from the names under `ws/{ws}/markers/`, decide what to
//! resolve (newest first, one per sub-key, not dismissed) and what to delete without resolving
//! (expired by name, superseded by a newer run of the same key). No I/O here.
//!
//! The planner takes names in ascending order (newest first). A store that lists in key order
//! feeds it while listing and stops as soon as [`Planner::is_full`]; a store that does not
//! (the local file system) is listed whole, sorted, and fed all at once ([`Listing::plan`]).

use super::id::ItemId;
use super::names::SubKey;
use std::collections::HashSet;
use std::fmt;

/// Why a marker is deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// Created longer ago than the TTL: deleted by name, never resolved.
    Expired,
    /// A newer run of the same sub-key exists (its id is given).
    Superseded(String),
    /// Finished longer ago than keep-finished.
    FinishedLongAgo,
    /// No record, and the marker is older than the grace period.
    NoRecord,
    /// A dismissal whose marker is gone (or is being deleted): a fact nobody will read.
    OrphanDismissal,
    /// A record whose marker is gone, older than the grace period plus the clock skew.
    OrphanRecord,
    /// An owner marker whose marker is going, or gone past the grace period plus the skew.
    OrphanOwnerMarker,
    /// A viewer's last look at a workspace with no item left, written longer ago than the
    /// grace period plus the skew.
    OrphanLook,
    /// A viewer's pin of an item whose record is gone, past the grace period plus the skew, or
    /// of an id past the TTL.
    OrphanPin,
}

impl Reason {
    /// Its name as a metric label (one per kind of reason, never an id).
    pub fn label(&self) -> &'static str {
        match self {
            Reason::Expired => "expired",
            Reason::Superseded(_) => "superseded",
            Reason::FinishedLongAgo => "finished_long_ago",
            Reason::NoRecord => "no_record",
            Reason::OrphanDismissal => "orphan_dismissal",
            Reason::OrphanRecord => "orphan_record",
            Reason::OrphanOwnerMarker => "orphan_owner_marker",
            Reason::OrphanLook => "orphan_look",
            Reason::OrphanPin => "orphan_pin",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Expired => f.write_str("expired: created longer ago than the TTL"),
            Reason::Superseded(newer) => write!(f, "superseded by the newer run {newer}"),
            Reason::FinishedLongAgo => f.write_str("finished longer ago than keep-finished"),
            Reason::NoRecord => f.write_str("no record, and older than the grace period"),
            Reason::OrphanDismissal => f.write_str("dismissal of a marker that no longer exists"),
            Reason::OrphanRecord => f.write_str("record whose marker no longer exists"),
            Reason::OrphanOwnerMarker => f.write_str("owner marker of an item that is gone"),
            Reason::OrphanLook => f.write_str("look at a workspace that has no marker left"),
            Reason::OrphanPin => f.write_str("pin of an item that is gone"),
        }
    }
}

/// What resolving one page may cost, in keys resolved (each with its rivals): `3N` that end
/// dead or pending, plus up to `5N` more for keys that cannot be read or parsed, so that a run
/// of unreadable records (a rolling upgrade, a store hiccup) cannot hide the live items behind
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    cap: usize,
    spent: usize,
    unknown: usize,
}

impl Budget {
    pub const RESOLVES_PER_CARD: usize = 3;
    pub(crate) const UNREADABLE_PER_CARD: usize = 5;

    pub fn new(cap: usize) -> Self {
        Budget {
            cap,
            spent: 0,
            unknown: 0,
        }
    }

    /// The most candidates a page can resolve: what a plan needs to hold.
    pub fn candidates(&self) -> usize {
        self.cap * (Self::RESOLVES_PER_CARD + Self::UNREADABLE_PER_CARD)
    }

    /// Reads left before the budget is spent.
    pub(crate) fn left(&self) -> usize {
        let main = (self.cap * Self::RESOLVES_PER_CARD).saturating_sub(self.spent);
        let extra = (self.cap * Self::UNREADABLE_PER_CARD).saturating_sub(self.unknown);
        if main == 0 {
            0
        } else {
            main + extra
        }
    }

    /// Count one read; `unreadable` ones come out of their own allowance while it lasts.
    pub(crate) fn spend(&mut self, unreadable: bool) {
        if unreadable && self.unknown < self.cap * Self::UNREADABLE_PER_CARD {
            self.unknown += 1;
        } else {
            self.spent += 1;
        }
    }
}

/// What the planner knows of time: now, the TTL, and how far servers' clocks may disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ages {
    pub now_ms: u64,
    pub ttl_ms: u64,
    pub max_skew_ms: u64,
}

/// At most this many older runs of a key within the clock skew of its newest are resolved
/// beside it; more are kept (never deleted) for the janitor.
pub(crate) const RIVALS_PER_KEY: usize = 4;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// What to resolve, newest first, at most one per sub-key (its newest run).
    pub candidates: Vec<ItemId>,
    /// Older runs of a candidate's key made within the clock skew of it: ids carry their
    /// server's clock, so any of them may really be the newest. They are resolved with the
    /// candidate, and the live one is shown. Newest first, at most [`RIVALS_PER_KEY`] a key.
    pub rivals: Vec<ItemId>,
    /// Markers to delete without resolving them.
    pub delete: Vec<(ItemId, Reason)>,
    /// Names that are not ids: skipped and logged, never deleted.
    pub unparsable: Vec<String>,
    /// Dismissed by this viewer: neither shown nor deleted.
    pub dismissed: Vec<ItemId>,
}

impl Plan {
    /// The rivals of each candidate's key, newest first.
    pub(crate) fn rivals_by_key(&self) -> std::collections::HashMap<&SubKey, Vec<&ItemId>> {
        let mut out: std::collections::HashMap<&SubKey, Vec<&ItemId>> = Default::default();
        for id in &self.rivals {
            out.entry(id.key()).or_default().push(id);
        }
        out
    }

    /// The runs read together for the `n` candidates from `from` on: each candidate with its
    /// key's rivals, newest first. A page reads its records a batch of these at a time, so
    /// this is every record a page needs next, and a live copy reads those it lacks before
    /// the page is computed again.
    pub(crate) fn batch(&self, from: usize, n: usize) -> Vec<Vec<&ItemId>> {
        let rivals = self.rivals_by_key();
        let end = (from + n).min(self.candidates.len());
        self.candidates[from.min(end)..end]
            .iter()
            .map(|id| {
                let more = rivals.get(id.key()).into_iter().flatten().copied();
                std::iter::once(id).chain(more).collect()
            })
            .collect()
    }
}

pub struct Planner<'a> {
    ages: Ages,
    dismissed: &'a HashSet<ItemId>,
    want: usize,
    /// The newest run of each key seen so far, how many rivals it has, and whether it lies at
    /// or before the cursor and would be a candidate (see [`Planner::after`]).
    newest_of_key: std::collections::HashMap<String, (ItemId, usize, bool)>,
    last: Option<ItemId>,
    /// The cursor of a later page: only cards after it are wanted.
    after: Option<ItemId>,
    plan: Plan,
}

impl<'a> Planner<'a> {
    /// `want`: how many candidates make the plan full (the resolve budget).
    pub fn new(ages: Ages, dismissed: &'a HashSet<ItemId>, want: usize) -> Self {
        Planner {
            ages,
            dismissed,
            want,
            newest_of_key: Default::default(),
            last: None,
            after: None,
            plan: Plan::default(),
        }
    }

    /// Plan a later page: the one after `cursor` (the last id of the page the viewer has).
    /// Names at or before it are still fed in, so that dedupe is that of the whole listing: an
    /// older run of a key whose newest run lies before the cursor is not a candidate of its
    /// own (it is superseded, or a rival resolved with that newest run). A key whose newest
    /// run is at or before the cursor is a candidate only if it has a rival after the cursor:
    /// the caller resolves them together and shows the settled run only if it is after the
    /// cursor. So every page is the next slice of what one unbounded page would show.
    pub(crate) fn after(mut self, cursor: Option<ItemId>) -> Self {
        self.after = cursor;
        self
    }

    fn behind_cursor(&self, id: &ItemId) -> bool {
        self.after.as_ref().is_some_and(|cursor| id <= cursor)
    }

    /// Feed the next marker name. Returns `false` if the name came out of order: the caller
    /// must then sort and plan again, since dedupe relies on seeing the newest run first.
    #[must_use]
    pub fn push(&mut self, name: &str) -> bool {
        match ItemId::parse(name) {
            Ok(id) => self.push_id(&id),
            Err(_) => {
                self.plan.unparsable.push(name.to_string());
                true
            }
        }
    }

    /// A name in the listing that is not an id: skipped (and logged by the caller).
    pub(crate) fn stray(&mut self, name: String) {
        self.plan.unparsable.push(name);
    }

    /// [`Planner::push`] for an id parsed already.
    #[must_use]
    pub(crate) fn push_id(&mut self, id: &ItemId) -> bool {
        match &self.last {
            Some(last) if id < last => return false,
            Some(last) if id == last => return true, // listed twice: once is enough
            _ => {}
        }
        self.last = Some(id.clone());
        let expired = self.ages.now_ms.saturating_sub(id.created_ms()) > self.ages.ttl_ms;
        let dismissed = !expired && self.dismissed.contains(id);
        // The newest run of a key is seen first. A later one made more than the clock skew
        // before it is superseded; one within the skew may be the real newest: a rival.
        let past_cursor = !self.behind_cursor(id);
        if let Some((newest, rivals, waiting)) = self.newest_of_key.get_mut(id.key().as_str()) {
            let behind = newest.created_ms() - id.created_ms();
            if behind > self.ages.max_skew_ms {
                let reason = Reason::Superseded(newest.to_string());
                self.plan.delete.push((id.clone(), reason));
            } else if expired {
                self.plan.delete.push((id.clone(), Reason::Expired));
            } else if !dismissed && *rivals < RIVALS_PER_KEY {
                *rivals += 1;
                self.plan.rivals.push(id.clone());
                if *waiting && past_cursor {
                    // Its key's runs are settled together; the one shown may be after the
                    // cursor. Candidates stay in order: those before the cursor come first.
                    *waiting = false;
                    let newest = newest.clone();
                    let at = self.plan.candidates.partition_point(|c| *c < newest);
                    self.plan.candidates.insert(at, newest);
                }
            }
            return true;
        }
        let waiting = !expired && !dismissed && !past_cursor;
        self.newest_of_key
            .insert(id.key().to_string(), (id.clone(), 0, waiting));
        if expired {
            self.plan.delete.push((id.clone(), Reason::Expired));
        } else if dismissed {
            self.plan.dismissed.push(id.clone());
        } else if past_cursor {
            self.plan.candidates.push(id.clone());
        }
        true
    }

    /// Enough candidates to spend the whole resolve budget: a sorted listing may stop here.
    pub(crate) fn is_full(&self) -> bool {
        self.plan.candidates.len() >= self.want
    }

    /// How many more candidates would fill the plan: what the next page of a listing needs.
    pub(crate) fn missing(&self) -> usize {
        self.want.saturating_sub(self.plan.candidates.len())
    }

    pub fn finish(self) -> Plan {
        self.plan
    }
}

/// A complete listing, parsed and sorted newest first (what the read cache keeps).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Listing {
    pub ids: Vec<ItemId>,
    pub unparsable: Vec<String>,
}

impl Listing {
    /// Names as a listing gives them (the tests' way in; the server's is [`Listing::from_ids`]).
    #[cfg(test)]
    pub(crate) fn from_names<S: AsRef<str>>(names: &[S]) -> Self {
        let mut listing = Listing::default();
        for name in names {
            match ItemId::parse(name.as_ref()) {
                Ok(id) => listing.ids.push(id),
                Err(_) => listing.unparsable.push(name.as_ref().to_string()),
            }
        }
        listing.ids.sort_unstable();
        listing.ids.dedup();
        listing
    }

    /// A complete listing's markers: the ids, and the names that are not ids (the index
    /// gives them from the store's listing; the core knows no store).
    pub(crate) fn from_ids(ids: impl IntoIterator<Item = ItemId>, unparsable: Vec<String>) -> Self {
        let mut listing = Listing {
            ids: ids.into_iter().collect(),
            unparsable,
        };
        listing.ids.sort_unstable();
        listing.ids.dedup();
        listing
    }

    /// Plan until `want` candidates are found (`usize::MAX`: everything). The second value
    /// says whether it stopped before the end: what lies beyond is left for the janitor.
    ///
    /// `after`: plan the page after this cursor ([`Planner::after`]).
    pub(crate) fn plan(
        &self,
        ages: Ages,
        dismissed: &HashSet<ItemId>,
        want: usize,
        after: Option<&ItemId>,
    ) -> (Plan, bool) {
        let mut planner = Planner::new(ages, dismissed, want).after(after.cloned());
        planner.plan.unparsable = self.unparsable.clone();
        for (i, id) in self.ids.iter().enumerate() {
            if planner.is_full() {
                return (planner.finish(), i < self.ids.len());
            }
            let in_order = planner.push_id(id);
            debug_assert!(in_order, "a listing is sorted");
        }
        (planner.finish(), false)
    }
}

/// Plan from a complete listing in any order.
#[cfg(test)]
pub(crate) fn plan<S: AsRef<str>>(names: &[S], ages: Ages, dismissed: &HashSet<ItemId>) -> Plan {
    Listing::from_names(names)
        .plan(ages, dismissed, usize::MAX, None)
        .0
}

#[cfg(test)]
mod tests {
    use super::super::id::MAX_CREATED_MS;
    use super::super::names::SubKey;
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    const NOW: u64 = 1_800_000_000_000;
    const TTL: u64 = 7 * 24 * 3_600_000;
    /// No clock skew: every older run of a key is superseded.
    const AGES: Ages = Ages {
        now_ms: NOW,
        ttl_ms: TTL,
        max_skew_ms: 0,
    };

    fn id(created_ms: u64, key: &str) -> String {
        ItemId::new(created_ms, SubKey::parse(key).unwrap())
            .unwrap()
            .to_string()
    }

    /// A batch is its candidates in order, each followed by its own key's rivals only, and
    /// never runs past the plan.
    #[test]
    fn a_batch_is_its_candidates_each_with_its_rivals() {
        let ages = Ages {
            max_skew_ms: 2_000,
            ..AGES
        };
        let names = [
            id(NOW, "a"),
            id(NOW - 1_000, "a"),
            id(NOW - 1_500, "b"),
            id(NOW - 2_000, "c"),
            id(NOW - 2_500, "c"),
            id(NOW - 2_600, "c"),
        ];
        let p = plan(&names, ages, &HashSet::new());
        let text = |groups: Vec<Vec<&ItemId>>| -> Vec<Vec<String>> {
            groups
                .into_iter()
                .map(|g| g.into_iter().map(ItemId::to_string).collect())
                .collect()
        };
        assert_eq!(
            text(p.batch(0, 2)),
            vec![
                vec![id(NOW, "a"), id(NOW - 1_000, "a")],
                vec![id(NOW - 1_500, "b")]
            ]
        );
        assert_eq!(
            text(p.batch(2, 10)),
            vec![vec![
                id(NOW - 2_000, "c"),
                id(NOW - 2_500, "c"),
                id(NOW - 2_600, "c")
            ]]
        );
        assert!(p.batch(3, 1).is_empty());
        assert!(p.batch(9, 1).is_empty());
    }

    #[test]
    fn runs_within_the_clock_skew_are_rivals_not_superseded() {
        let ages = Ages {
            max_skew_ms: 2_000,
            ..AGES
        };
        // The newest by id was made on a clock up to 2 s fast: the run 1 s "older" may be the
        // real newest. One 3 s older is superseded.
        let names = [id(NOW, "k"), id(NOW - 1_000, "k"), id(NOW - 3_000, "k")];
        let p = plan(&names, ages, &HashSet::new());
        let text = |v: &[ItemId]| v.iter().map(|i| i.to_string()).collect::<Vec<_>>();
        assert_eq!(text(&p.candidates), vec![id(NOW, "k")]);
        assert_eq!(text(&p.rivals), vec![id(NOW - 1_000, "k")]);
        assert_eq!(
            p.delete,
            vec![(
                ItemId::parse(&id(NOW - 3_000, "k")).unwrap(),
                Reason::Superseded(id(NOW, "k"))
            )]
        );
        // At most RIVALS_PER_KEY rivals; the rest are kept, neither resolved nor deleted.
        let many: Vec<String> = (0..10).map(|i| id(NOW - i, "k")).collect();
        let p = plan(&many, ages, &HashSet::new());
        assert_eq!((p.rivals.len(), p.delete.len()), (RIVALS_PER_KEY, 0));
    }

    /// A later page (after a cursor) plans as the whole listing would: an older run of a key
    /// whose newest run lies before the cursor is no candidate of its own. It is superseded
    /// (deleted, as the first page would have), or a rival: then the key's newest run comes
    /// back as a candidate, so the two are settled together as on the first page, and the
    /// reader shows the settled run only if it lies after the cursor.
    #[test]
    fn a_later_page_does_not_show_an_older_run_of_a_key_before_the_cursor() {
        let ages = Ages {
            max_skew_ms: 2_000,
            ..AGES
        };
        let names = [
            id(NOW, "a"),
            id(NOW - 500, "b"),
            id(NOW - 1_000, "a"), // a rival of a's newest run, after the cursor
            id(NOW - 1_500, "c"), // a key seen after the cursor only
            id(NOW - 3_000, "b"), // superseded by b's newest run, before the cursor
        ];
        let cursor = ItemId::parse(&id(NOW - 500, "b")).unwrap();
        let none = HashSet::new();
        let listing = Listing::from_names(&names);
        let (p, _) = listing.plan(ages, &none, usize::MAX, Some(&cursor));
        let text = |v: &[ItemId]| v.iter().map(|i| i.to_string()).collect::<Vec<_>>();
        assert_eq!(
            text(&p.candidates),
            vec![id(NOW, "a"), id(NOW - 1_500, "c")]
        );
        assert_eq!(text(&p.rivals), vec![id(NOW - 1_000, "a")]);
        assert_eq!(
            p.delete,
            vec![(
                ItemId::parse(&id(NOW - 3_000, "b")).unwrap(),
                Reason::Superseded(id(NOW - 500, "b"))
            )]
        );
        // Without a rival after the cursor, a key before it is not planned at all.
        let cursor = ItemId::parse(&id(NOW - 1_000, "a")).unwrap();
        let (p, _) = listing.plan(ages, &none, usize::MAX, Some(&cursor));
        assert_eq!(text(&p.candidates), vec![id(NOW - 1_500, "c")]);
    }

    #[test]
    fn unreadable_records_have_their_own_allowance() {
        let mut b = Budget::new(2);
        assert_eq!((b.candidates(), b.left()), (16, 16));
        for _ in 0..10 {
            b.spend(true);
        }
        assert_eq!(
            b.left(),
            6,
            "the unreadable allowance is spent, the main budget is not"
        );
        b.spend(true);
        assert_eq!(
            b.left(),
            5,
            "past its allowance an unreadable record costs like any other"
        );
        for _ in 0..5 {
            b.spend(false);
        }
        assert_eq!(b.left(), 0);
    }

    #[test]
    fn keeps_newest_per_key_and_deletes_older_runs() {
        let names = [
            id(NOW - 10, "a"),
            id(NOW - 5, "a"),
            id(NOW - 7, "b"),
            "junk".to_string(),
        ];
        let p = plan(&names, AGES, &HashSet::new());
        let shown: Vec<String> = p.candidates.iter().map(|i| i.to_string()).collect();
        assert_eq!(shown, vec![id(NOW - 5, "a"), id(NOW - 7, "b")]);
        assert_eq!(
            p.delete,
            vec![(
                ItemId::parse(&id(NOW - 10, "a")).unwrap(),
                Reason::Superseded(id(NOW - 5, "a"))
            )]
        );
        assert_eq!(p.unparsable, vec!["junk".to_string()]);
    }

    #[test]
    fn expired_by_name_and_its_older_runs_superseded() {
        let names = [
            id(NOW - TTL - 1, "a"),
            id(NOW - TTL - 2, "a"),
            id(NOW - TTL, "b"),
        ];
        let p = plan(&names, AGES, &HashSet::new());
        assert_eq!(p.candidates.len(), 1, "exactly TTL old is still shown");
        assert_eq!(p.delete[0].1, Reason::Expired);
        assert!(matches!(p.delete[1].1, Reason::Superseded(_)));
    }

    #[test]
    fn dismissed_are_neither_shown_nor_deleted_and_hide_older_runs() {
        let newest = id(NOW - 1, "a");
        let names = [newest.clone(), id(NOW - 2, "a")];
        let dismissed = HashSet::from([ItemId::parse(&newest).unwrap()]);
        let p = plan(&names, AGES, &dismissed);
        assert!(p.candidates.is_empty());
        assert_eq!(p.dismissed[0].to_string(), newest);
        assert_eq!(p.delete.len(), 1);
    }

    #[test]
    fn out_of_order_input_is_reported() {
        let dismissed = HashSet::new();
        let mut planner = Planner::new(AGES, &dismissed, 10);
        assert!(planner.push(&id(NOW - 1, "a")));
        assert!(!planner.push(&id(NOW, "b")));
    }

    #[test]
    fn is_full_at_want_candidates() {
        let dismissed = HashSet::new();
        let mut planner = Planner::new(AGES, &dismissed, 2);
        assert!(planner.push(&id(NOW - 1, "a")));
        assert!(!planner.is_full());
        assert!(planner.push(&id(NOW - 2, "a")));
        assert!(!planner.is_full(), "a superseded run is not a candidate");
        assert!(planner.push(&id(NOW - 3, "b")));
        assert!(planner.is_full());
    }

    fn arb_ids() -> impl Strategy<Value = Vec<(u64, String)>> {
        prop::collection::vec((0..2 * TTL, "[a-d]{1,2}"), 0..60)
    }

    proptest! {
        /// For any listing: one candidate per live key, and it is that key's newest run; every
        /// id is accounted for exactly once; nothing within the TTL is deleted except an older
        /// run of a shown key; candidates are newest first.
        #[test]
        fn plan_invariants(raw in arb_ids(), dismiss_mask in any::<u64>()) {
            let names: Vec<String> = raw.iter().map(|(age, k)| id(NOW - age, k)).collect();
            let ids: HashSet<String> = names.iter().cloned().collect();
            let dismissed: HashSet<ItemId> = ids.iter().enumerate()
                .filter(|(i, _)| dismiss_mask >> (i % 64) & 1 == 1).map(|(_, s)| ItemId::parse(s).unwrap()).collect();
            let p = plan(&names, AGES, &dismissed);

            let mut newest: HashMap<String, ItemId> = HashMap::new();
            for n in &ids {
                let i = ItemId::parse(n).unwrap();
                let e = newest.entry(i.key().to_string()).or_insert_with(|| i.clone());
                if i < *e { *e = i; }
            }
            // Exactly the newest per key is kept (as candidate or dismissed) unless expired.
            for (k, i) in &newest {
                let live = NOW - i.created_ms() <= TTL;
                let kept = p.candidates.contains(i) || p.dismissed.contains(i);
                prop_assert_eq!(kept, live, "key {}", k);
                prop_assert!(!p.delete.iter().any(|(d, _)| d == i) || !live);
            }
            // Never plans to delete a live candidate; candidates are strictly newest first.
            for (d, _) in &p.delete { prop_assert!(!p.candidates.contains(d)); }
            prop_assert!(p.candidates.windows(2).all(|w| w[0] < w[1]));
            // Every distinct id is in exactly one bucket.
            prop_assert_eq!(p.candidates.len() + p.dismissed.len() + p.delete.len(), ids.len());
            prop_assert!(p.candidates.iter().all(|c| !dismissed.contains(c)));
            prop_assert!(MAX_CREATED_MS > NOW);
        }

        /// Feeding a sorted listing with a budget yields a prefix of the full plan.
        #[test]
        fn early_stop_is_a_prefix(raw in arb_ids(), want in 1usize..10) {
            let mut names: Vec<String> = raw.iter().map(|(age, k)| id(NOW - age, k)).collect();
            names.sort();
            names.dedup();
            let none = HashSet::new();
            let full = plan(&names, AGES, &none);
            let mut planner = Planner::new(AGES, &none, want);
            for n in &names {
                prop_assert!(planner.push(n));
                if planner.is_full() { break; }
            }
            let part = planner.finish();
            let n = part.candidates.len();
            prop_assert!(n <= want);
            prop_assert_eq!(&part.candidates[..], &full.candidates[..n]);
        }
    }
}
