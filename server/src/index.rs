//! The marker index: one empty object per item under `markers/{ws}/`, never a shared list.
//!
//! Guarantees:
//! - A write touches only its own keys and reads nothing shared, so concurrent producers never
//!   overwrite each other.
//! - A read never treats an error as "empty": a failed listing is an error for the caller and
//!   deletes nothing; a record that cannot be read makes the page `partial` and keeps its marker.
//! - Only markers confirmed dead (expired by name, superseded by a newer run, finished long ago,
//!   recordless past the grace period) are deleted, one key at a time, after the answer.

use crate::cache::ReadCache;
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::id::ItemId;
use crate::names::{UserId, Workspace};
use crate::plan::{Ages, Budget, Listing, Planner, Reason};
use crate::record::{owner_of, ItemRecord, ItemUpdate, NewItem};
use crate::store::Version;
use crate::store::{Expect, Found, Key, KeyKind, ListOrder, Scope, Store, StoreError, Stored};
use crate::verdict::{judge, settle, Limits, Lookup, Verdict};
use app::model::{Card, Filter, Owner, RecentPage, MAX_CAP};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// How many times register moves `created_ms` on by 1 ms when its id is taken.
const CREATE_ATTEMPTS: u64 = 5;

/// How many times an update reads again after the record changed between its read and its
/// write (a concurrent update by the same producer).
const UPDATE_ATTEMPTS: usize = 5;

#[derive(Clone)]
pub struct Index {
    store: Store,
    pub limits: Limits,
    pub default_cap: u32,
    pub clock: Arc<dyn Clock>,
    /// Shared by concurrent reads (`serve` turns it on; tests and the janitor read directly).
    cache: Option<Arc<ReadCache>>,
    /// Checks this server's clock against the store's before deleting anything by age
    /// (`serve` and `prune` turn it on; tests with manual clocks leave it off).
    clock_check: Option<Arc<ClockCheck>>,
}

/// How often [`ClockCheck`] asks the store for its time.
const CLOCK_CHECK_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// The last comparison of this server's clock with the store's, reused for a minute.
#[derive(Default)]
pub struct ClockCheck {
    last: std::sync::Mutex<Option<(std::time::Instant, bool)>>,
}

/// Keys a read or a sweep found dead, to delete after the answer is sent. Deleting a
/// [`Key::Marker`] takes the item's record with it (marker first, so the item leaves every
/// reader's view before its record goes).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Prune {
    pub deletes: Vec<(Key, Reason)>,
    pub by: FoundBy,
}

/// Who found the keys of a [`Prune`] dead, for the operators' numbers.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum FoundBy {
    /// A read (`recent`, a live watcher's read).
    #[default]
    Read,
    /// A sweep of the janitor (the server's, or `pickup prune`).
    Janitor,
}

impl FoundBy {
    fn label(self) -> &'static str {
        match self {
            FoundBy::Read => "read",
            FoundBy::Janitor => "janitor",
        }
    }
}

/// What [`Index::apply`] deleted, per kind of key.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PruneReport {
    pub deleted: BTreeMap<KeyKind, usize>,
    pub failed: usize,
    /// Deletes by age not made because this server's clock disagrees with the store's.
    pub held: usize,
}

impl PruneReport {
    pub fn total(&self) -> usize {
        self.deleted.values().sum()
    }
}

/// A whole page, plus what the reader learned on the way.
#[derive(Debug)]
pub struct Read {
    pub page: RecentPage,
    pub prune: Prune,
    /// How many keys the listing took from the store (on the clouds, all it returned): what a
    /// read costs in listing, whatever the workspace's size.
    pub listed: usize,
}

impl Index {
    pub fn new(store: Store, limits: Limits, default_cap: u32, clock: Arc<dyn Clock>) -> Self {
        Index {
            store,
            limits,
            default_cap,
            clock,
            cache: None,
            clock_check: None,
        }
    }

    /// The same index, telling the time by `clock`.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Check this server's clock against the store's before any delete by age.
    pub fn with_clock_check(mut self) -> Self {
        self.clock_check = Some(Arc::default());
        self
    }

    /// Whether this server's clock may be trusted to judge ages: it agrees with the store's
    /// clock within the allowed skew. A failed check is a "no": nothing is deleted by age on
    /// the strength of an error.
    pub async fn ages_trusted(&self) -> bool {
        let Some(check) = &self.clock_check else {
            return true;
        };
        if let Some((at, ok)) = *check.last.lock().expect("clock check lock") {
            if at.elapsed() < CLOCK_CHECK_EVERY {
                return ok;
            }
        }
        let before = self.clock.now_ms();
        let store = self.store.now_ms().await;
        let mine = before + self.clock.now_ms().saturating_sub(before) / 2;
        let ok = match store {
            Ok(theirs) if theirs.abs_diff(mine) <= self.limits.max_skew_ms => true,
            Ok(theirs) => {
                tracing::error!(
                    store = %self.store.url(),
                    this_server_ms = mine,
                    store_ms = theirs,
                    max_skew_ms = self.limits.max_skew_ms,
                    "THIS SERVER'S CLOCK DISAGREES WITH THE STORE'S by more than PICKUP_MAX_SKEW: nothing is deleted by age until it is fixed"
                );
                false
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not read the store's clock; nothing is deleted by age for now");
                false
            }
        };
        *check.last.lock().expect("clock check lock") = Some((std::time::Instant::now(), ok));
        ok
    }

    /// Share listings and record reads between requests for up to `fresh_for`.
    pub fn with_read_cache(mut self, fresh_for: std::time::Duration) -> Self {
        self.cache =
            (!fresh_for.is_zero()).then(|| Arc::new(ReadCache::new(self.store.clone(), fresh_for)));
        self
    }

    fn wrote(&self, ws: &Workspace) {
        if let Some(cache) = &self.cache {
            cache.wrote(ws);
        }
    }

    /// An id a caller sent: well formed, and not dated later than now plus the clock skew
    /// (no server made such an id; it would look young forever).
    pub fn item_id(&self, raw: &str) -> Result<ItemId> {
        let id = ItemId::parse(raw)?;
        if let Some(ahead_ms) = self
            .limits
            .too_far_ahead(id.created_ms(), self.clock.now_ms())
        {
            return Err(Error::FutureId {
                ahead_ms,
                max_skew_ms: self.limits.max_skew_ms,
            });
        }
        Ok(id)
    }

    // ---- write path -------------------------------------------------------------------------

    /// Write the record with a create-only put, then the empty marker. Reads nothing shared.
    /// Transient faults are retried ([`Store::put`]); a put the store applied but whose answer
    /// was lost is recognised by reading it back, so it is neither lost nor recorded twice.
    pub async fn register(
        &self,
        ws: &Workspace,
        item: &NewItem,
        owner: Owner,
    ) -> Result<ItemRecord> {
        let key = crate::names::SubKey::parse(&item.key)?;
        let now = self.clock.now_ms();
        for attempt in 0..CREATE_ATTEMPTS {
            let id = ItemId::new(now + attempt, key.clone())?;
            let record = ItemRecord::new(ws, &id, item, owner.clone())?;
            let body =
                bytes::Bytes::from(serde_json::to_vec(&record).expect("a record serialises"));
            let key = Key::Record(ws.clone(), id.clone());
            match self.store.write(&key, body, Expect::Absent).await {
                Ok(_) => {
                    // The owner's marker before the workspace's: once an item is listed, it
                    // is listed among its owner's too. The record is there before both.
                    let owner = UserId::parse(&record.owner.sub)?;
                    for marker in [
                        Key::OwnerMarker(ws.clone(), owner, id.clone()),
                        Key::Marker(ws.clone(), id),
                    ] {
                        self.store.mark(&marker).await?;
                    }
                    self.wrote(ws);
                    return Ok(record);
                }
                Err(StoreError::Exists) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(Error::IdsTaken {
            key: key.to_string(),
            attempts: CREATE_ATTEMPTS,
        })
    }

    /// Write the whole record the producer sends, after checking that the item exists (404)
    /// and that the caller owns it (403). With `if_match` (a validator a GET or PUT of this
    /// record handed out: [`Version::validator`]) the write is the caller's compare-and-set
    /// (412 on a lost race; 501 on a store that cannot). Without it, the write is still
    /// conditional on the version just read where the store can do that, so an update racing
    /// a removal never re-creates the record; where it cannot (the local file system), it is a
    /// plain write, and a record it re-creates has no marker: the janitor deletes it.
    pub async fn update(
        &self,
        ws: &Workspace,
        id: &ItemId,
        up: &ItemUpdate,
        caller: &UserId,
        if_match: Option<String>,
    ) -> Result<(ItemRecord, Option<String>)> {
        let key = Key::Record(ws.clone(), id.clone());
        for _ in 0..UPDATE_ATTEMPTS {
            let (owner, version) = self.owned_record(ws, id, caller).await?;
            let record = ItemRecord::updated(ws, id, up, owner, self.clock.now_ms())?;
            let body =
                bytes::Bytes::from(serde_json::to_vec(&record).expect("a record serialises"));
            let expected = match &if_match {
                Some(validator) => Version::from_validator(validator)?,
                None => version,
            };
            let written = match self
                .store
                .write(&key, body.clone(), Expect::Version(expected))
                .await
            {
                // This store has no conditional writes: a plain write, unless the caller asked
                // for a compare-and-set, which is then refused rather than silently dropped.
                Err(StoreError::NotSupported(_)) if if_match.is_none() => {
                    self.store.write(&key, body, Expect::Any).await
                }
                // Changed since our read (a concurrent update, or a removal): read again.
                Err(StoreError::Precondition) if if_match.is_none() => continue,
                other => other,
            }?;
            self.wrote(ws);
            return Ok((record, written.validator()));
        }
        Err(Error::PreconditionFailed)
    }

    /// The record's owner and version, if it exists and `caller` owns it.
    async fn owned_record(
        &self,
        ws: &Workspace,
        id: &ItemId,
        caller: &UserId,
    ) -> Result<(Owner, Version)> {
        let key = Key::Record(ws.clone(), id.clone());
        let Some(Stored { bytes, version }) = self.store.read(&key).await? else {
            return Err(Error::NotFound);
        };
        let owner = owner_of(&bytes).ok_or_else(|| unreadable(id))?;
        if owner.sub != caller.as_str() {
            return Err(Error::NotOwner);
        }
        Ok((owner, version))
    }

    /// The record and its validator (the `ETag` to send back in `If-Match`).
    pub async fn get(&self, ws: &Workspace, id: &ItemId) -> Result<(ItemRecord, Option<String>)> {
        let key = Key::Record(ws.clone(), id.clone());
        let Some(Stored { bytes, version }) = self.store.read(&key).await? else {
            return Err(Error::NotFound);
        };
        let record = serde_json::from_slice(&bytes).map_err(|_| unreadable(id))?;
        Ok((record, version.validator()))
    }

    /// Delete the marker first (the item leaves every reader's view), then the record. Only
    /// the owner may; an item with no record is 404 and nothing is deleted.
    pub async fn remove(&self, ws: &Workspace, id: &ItemId, caller: &UserId) -> Result<()> {
        self.owned_record(ws, id, caller).await?;
        for key in [
            Key::Marker(ws.clone(), id.clone()),
            Key::OwnerMarker(ws.clone(), caller.clone(), id.clone()),
            Key::Record(ws.clone(), id.clone()),
        ] {
            self.store.delete(&key).await?;
        }
        self.wrote(ws);
        Ok(())
    }

    /// A fact under the viewer's own key: "I dismissed this item". Only of an item that has a
    /// record (404 otherwise, and nothing is written).
    pub async fn dismiss(&self, ws: &Workspace, user: &UserId, id: &ItemId) -> Result<()> {
        if !self
            .store
            .exists(&Key::Record(ws.clone(), id.clone()))
            .await?
        {
            return Err(Error::NotFound);
        }
        self.store
            .mark(&Key::Dismissal(ws.clone(), user.clone(), id.clone()))
            .await?;
        self.wrote(ws);
        Ok(())
    }

    // ---- read path --------------------------------------------------------------------------

    /// DESIGN.md steps 2–7. Deletes nothing itself: the caller applies [`Read::prune`] after
    /// answering (step 8).
    ///
    /// `before`: the last id of the page the viewer has; the answer is the next page, the cards
    /// a page without a cap would show after that id (an older run of a key shown before the
    /// cursor is not a card of its own: see [`Planner::after`]).
    pub async fn recent(
        &self,
        ws: &Workspace,
        viewer: &UserId,
        filter: Filter,
        cap: Option<u32>,
        before: Option<&ItemId>,
    ) -> Result<Read> {
        let dismissed = self.dismissals(ws, viewer).await?;
        self.recent_without(ws, viewer, filter, cap, before, &dismissed)
            .await
    }

    /// [`Index::recent`] for a viewer whose dismissals are known already (the live watcher
    /// lists every viewer's at once; a live page is always the first, `before` = `None`).
    pub async fn recent_without(
        &self,
        ws: &Workspace,
        viewer: &UserId,
        filter: Filter,
        cap: Option<u32>,
        before: Option<&ItemId>,
        dismissed: &HashSet<ItemId>,
    ) -> Result<Read> {
        let cap = cap.unwrap_or(self.default_cap).clamp(1, MAX_CAP) as usize;
        let mut budget = Budget::new(cap);
        let now = self.clock.now_ms();

        // "Mine" lists the viewer's own markers: its cost does not depend on how busy the
        // workspace is.
        let source = match filter {
            Filter::All => Scope::Markers(ws.clone()),
            Filter::Mine => Scope::OwnerMarkers(ws.clone(), viewer.clone()),
        };
        let (plan, listing_cut, listed) = self
            .plan_markers(&source, now, dismissed, budget.candidates(), before)
            .await?;
        // Markers to delete, by id: planned by name, then found dead by their records.
        let mut dead: Vec<(ItemId, Reason)> = plan.delete.clone();
        for name in &plan.unparsable {
            tracing::warn!(ws = %ws, name, "skipping a marker whose name is not an id");
        }

        let mut cards: Vec<Card> = Vec::new();
        let mut partial = false;
        let mut resolved = 0;
        let rivals = plan.rivals_by_key();
        // A rival shown in place of its key's newest id may sort after the next key's card: a
        // card is certain only once every candidate before it is resolved.
        let certain = |cards: &[Card], resolved: usize| match plan.candidates.get(resolved) {
            Some(next) => cards.iter().filter(|c| c.id < next.to_string()).count(),
            None => cards.len(),
        };
        // Newest first, N keys at a time (each with its rivals), until N certain cards or the
        // budget is spent.
        while certain(&cards, resolved) < cap
            && budget.left() > 0
            && resolved < plan.candidates.len()
        {
            let n = cap.min(budget.left()).min(plan.candidates.len() - resolved);
            let batch = &plan.candidates[resolved..resolved + n];
            resolved += n;
            let groups: Vec<Vec<&ItemId>> = batch
                .iter()
                .map(|id| {
                    let more = rivals.get(id.key()).into_iter().flatten().copied();
                    std::iter::once(id).chain(more).collect()
                })
                .collect();
            let lookups =
                futures::future::join_all(groups.iter().flatten().map(|id| self.lookup(ws, id)))
                    .await;
            let mut lookups = lookups.into_iter();
            for group in groups {
                let runs: Vec<(ItemId, Verdict)> = group
                    .into_iter()
                    .zip(lookups.by_ref())
                    .map(|(id, lookup)| {
                        let verdict = judge(id, lookup, now, &self.limits);
                        budget.spend(matches!(verdict, Verdict::Unknown(_)));
                        (id.clone(), verdict)
                    })
                    .collect();
                let settled = settle(runs);
                dead.extend(settled.dead);
                for (id, why) in settled.unknown {
                    tracing::warn!(ws = %ws, id = %id, why, "could not resolve an item; keeping its marker");
                    partial = true;
                }
                if let Some((shown, card)) = settled.shown {
                    // A key whose newest run is before the cursor, settled on a run before it
                    // too, was shown on an earlier page.
                    let earlier = before.is_some_and(|cursor| shown <= *cursor);
                    if !earlier && (filter == Filter::All || card.owner.sub == viewer.as_str()) {
                        cards.push(card);
                    }
                }
            }
        }
        cards.sort_by(|a, b| a.id.cmp(&b.id));
        // Not past a candidate left unresolved: its card would belong before them, and a next
        // page (after the last card shown) would never show it.
        if let Some(next) = plan.candidates.get(resolved).map(ItemId::to_string) {
            cards.retain(|c| c.id < next);
        }
        let mut prune = Prune::default();
        for (id, reason) in dead {
            // A viewer's dismissal of an item that is going away goes with it, after it.
            let dismissal = dismissed
                .contains(&id)
                .then(|| Key::Dismissal(ws.clone(), viewer.clone(), id.clone()));
            if filter == Filter::Mine {
                // The viewer owns it: its owner marker goes first (otherwise the janitor
                // finds it orphaned).
                let mine = Key::OwnerMarker(ws.clone(), viewer.clone(), id.clone());
                prune.deletes.push((mine, reason.clone()));
            }
            prune.deletes.push((Key::Marker(ws.clone(), id), reason));
            if let Some(dismissal) = dismissal {
                prune.deletes.push((dismissal, Reason::OrphanDismissal));
            }
        }
        let more = cards.len() > cap || resolved < plan.candidates.len() || listing_cut;
        cards.truncate(cap);
        let page = RecentPage {
            cards,
            more,
            partial,
            generated_at: crate::record::ms_to_time(now)
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        };
        Ok(Read {
            page,
            prune,
            listed,
        })
    }

    /// List the workspace's markers into a plan. On a sorted store the listing is read in
    /// pages of what the plan still lacks, and stops once the plan holds `budget` candidates
    /// (the second value says it stopped early, so there may be more; the third is how many
    /// keys it listed). `before`: plan the page after this id ([`Planner::after`]).
    async fn plan_markers(
        &self,
        scope: &Scope,
        now: u64,
        dismissed: &HashSet<ItemId>,
        budget: usize,
        before: Option<&ItemId>,
    ) -> Result<(crate::plan::Plan, bool, usize)> {
        let ages = Ages {
            now_ms: now,
            ttl_ms: self.limits.ttl_ms,
            max_skew_ms: self.limits.max_skew_ms,
        };
        if self.store.order() == ListOrder::Unsorted {
            // The whole listing (the file system has no order); planning stops at the budget,
            // so what lies beyond is left to the janitor.
            let found = self.list_all(scope).await?;
            let (plan, cut) = Listing::from_found(&found).plan(ages, dismissed, budget, before);
            return Ok((plan, cut, found.keys.len() + found.strays.len()));
        }
        let mut planner = Planner::new(ages, dismissed, budget).after(before.cloned());
        // From the start even with `before`: the names before the cursor say which keys were
        // shown already (their records are not read).
        let mut pages = self.store.pages(scope, None);
        // One more than the plan lacks: the extra key says whether there is more.
        while let Some(found) = pages.next(planner.missing() + 1).await? {
            for name in &found.strays {
                planner.stray(name.clone());
            }
            for id in found.ids() {
                if planner.is_full() {
                    return Ok((planner.finish(), true, pages.returned));
                }
                if !planner.push_id(id) {
                    // Not in order after all: list everything and plan from it sorted.
                    tracing::warn!(store = %self.store.url(), "listing was not in key order; sorting it");
                    let found = self.list_all(scope).await?;
                    let listed = pages.returned + found.keys.len() + found.strays.len();
                    let (plan, _) =
                        Listing::from_found(&found).plan(ages, dismissed, usize::MAX, before);
                    return Ok((plan, false, listed));
                }
            }
            if planner.is_full() {
                // A page may be empty and still not the last: read on until a key or the end.
                let more = loop {
                    match pages.next(1).await? {
                        None => break false,
                        Some(f) if !f.keys.is_empty() => break true,
                        Some(_) => continue,
                    }
                };
                return Ok((planner.finish(), more, pages.returned));
            }
        }
        Ok((planner.finish(), false, pages.returned))
    }

    /// Every key of a scope, in key order (through the read cache when there is one).
    async fn list_all(&self, scope: &Scope) -> Result<Arc<Found>> {
        Ok(match &self.cache {
            Some(cache) => cache.list(scope).await?,
            None => Arc::new(self.store.list(scope).await?),
        })
    }

    /// Every viewer's dismissals in `ws` (one listing).
    pub async fn all_dismissals(&self, ws: &Workspace) -> Result<HashMap<UserId, HashSet<ItemId>>> {
        let found = self.store.list(&Scope::AllDismissals(ws.clone())).await?;
        let mut out: HashMap<UserId, HashSet<ItemId>> = HashMap::new();
        for key in found.keys {
            if let Key::Dismissal(_, user, id) = key {
                out.entry(user).or_default().insert(id);
            }
        }
        Ok(out)
    }

    /// The ids this viewer dismissed in `ws`.
    async fn dismissals(&self, ws: &Workspace, viewer: &UserId) -> Result<HashSet<ItemId>> {
        let found = self
            .list_all(&Scope::Dismissals(ws.clone(), viewer.clone()))
            .await?;
        Ok(found.ids().cloned().collect())
    }

    /// Read one record (through the read cache when there is one). Errors are `Failed`, never
    /// `NotFound`.
    pub(crate) async fn lookup(&self, ws: &Workspace, id: &ItemId) -> Lookup {
        let key = Key::Record(ws.clone(), id.clone());
        Lookup::from(match &self.cache {
            Some(cache) => cache.read(&key).await,
            None => self.store.read(&key).await,
        })
    }

    /// Step 8: delete what a read or a sweep found dead, one key at a time; a marker's record
    /// goes right after the marker. A failure is logged and happens again on a later read or
    /// sweep; a key someone else already deleted is fine.
    ///
    /// Deletes decided by age wait while this server's clock disagrees with the store's
    /// ([`Index::ages_trusted`]); they are counted in [`PruneReport::held`].
    pub async fn apply(&self, prune: &Prune) -> PruneReport {
        let by = prune.by;
        use crate::metrics::{DELETIONS, DELETIONS_HELD, DELETION_FAILURES};
        let mut report = PruneReport::default();
        let mut touched: Vec<&Workspace> = Vec::new();
        let by_age = prune.deletes.iter().any(|(_, r)| r.is_by_age());
        let ages_trusted = !by_age || self.ages_trusted().await;
        for (key, reason) in &prune.deletes {
            if reason.is_by_age() && !ages_trusted {
                report.held += 1;
                metrics::counter!(DELETIONS_HELD, "by" => by.label()).increment(1);
                continue;
            }
            let mut doomed = vec![key.clone()];
            if let Key::Marker(ws, id) = key {
                doomed.push(Key::Record(ws.clone(), id.clone()));
            }
            for key in doomed {
                match self.store.delete(&key).await {
                    Ok(()) => {
                        tracing::debug!(%key, %reason, "pruned");
                        *report.deleted.entry(key.kind()).or_default() += 1;
                        metrics::counter!(DELETIONS, "by" => by.label(), "reason" => reason.label(), "kind" => key.kind().label())
                            .increment(1);
                    }
                    Err(e) => {
                        tracing::warn!(%key, error = %e, "prune failed; a later read or sweep will retry");
                        report.failed += 1;
                        metrics::counter!(DELETION_FAILURES, "by" => by.label()).increment(1);
                        // A record stays while its marker does: stop at the first failure.
                        break;
                    }
                }
            }
            if !touched.contains(&key.ws()) {
                touched.push(key.ws());
            }
        }
        for ws in touched {
            self.wrote(ws);
        }
        report
    }
}

/// A record's read, for the resolver: an error is "unknown", never "not found".
impl From<crate::store::Result<Option<Stored>>> for Lookup {
    fn from(read: crate::store::Result<Option<Stored>>) -> Self {
        match read {
            Ok(Some(stored)) => Lookup::Found(stored.bytes),
            Ok(None) => Lookup::NotFound,
            Err(e) => Lookup::Failed(e.to_string()),
        }
    }
}

/// A record that exists but is not one (or not one this version can read).
fn unreadable(id: &ItemId) -> Error {
    Error::UnreadableRecord(id.clone())
}
