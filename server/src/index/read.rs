//! The read path: a page of cards from a listing of markers and a read of each candidate's
//! record. A read never treats an error as "empty": a failed listing is an error for the
//! caller and deletes nothing; a record that cannot be read makes the page `partial` and keeps
//! its marker.

use super::cache::PageAsk;
use super::core::plan::{Ages, Budget, Listing, Plan, Planner, Reason};
use super::core::verdict::{judge, settle, RecordLookup, Verdict};
use super::marker_index::{Index, PageRead, SharedPage};
use super::prune::Prune;
use super::store::{look_time, Found, ListOrder, Scope, Stored};
use crate::index::ItemId;
use crate::index::Key;
use crate::index::{IndexError, Result};
use crate::index::{UserId, Workspace};
use app::contract::LastLook;
use app::contract::{Cap, Card, Filter, RecentPage};
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

impl Index {
    /// DESIGN.md steps 2–7. Deletes nothing itself: the caller applies [`PageRead::prune`] after
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
    ) -> Result<PageRead> {
        let (dismissed, pinned) =
            futures::try_join!(self.dismissals(ws, viewer), self.pins(ws, viewer))?;
        let Some(cache) = &self.cache else {
            return self
                .recent_without(ws, viewer, filter, cap, before, &dismissed, &pinned)
                .await;
        };
        let mut sorted: Vec<ItemId> = dismissed.iter().cloned().collect();
        sorted.sort_unstable();
        let ask = PageAsk {
            source: source_of(ws, viewer, filter),
            cap,
            before: before.cloned(),
            dismissed: sorted,
            pinned: pinned.iter().cloned().collect(),
        };
        // Boxed: computed behind an answer, it outlives this request; and a read's future
        // holding it inline overflowed the stack of a debug build's test thread.
        let compute = || {
            let (index, ws, viewer, before) =
                (self.clone(), ws.clone(), viewer.clone(), before.cloned());
            Box::pin(async move {
                index
                    .recent_without(
                        &ws,
                        &viewer,
                        filter,
                        cap,
                        before.as_ref(),
                        &dismissed,
                        &pinned,
                    )
                    .await
            })
        };
        let cached = cache.page(ask, compute).await?;
        let read = &cached.read;
        // What it found dead is deleted once, by the first request handed the page.
        let first = cached.take_prune();
        Ok(PageRead {
            page: read.page.clone(),
            prune: if first {
                read.prune.clone()
            } else {
                Prune::default()
            },
            listed: if first { read.listed } else { 0 },
            unread: read.unread.clone(),
        })
    }

    /// [`Index::recent`] for a viewer whose dismissals and pins are known. The first page
    /// (no `before`) starts with the pinned items, above the cap's cards; the plan leaves
    /// them out, as it leaves out the dismissed.
    #[allow(clippy::too_many_arguments)]
    async fn recent_without(
        &self,
        ws: &Workspace,
        viewer: &UserId,
        filter: Filter,
        cap: Option<u32>,
        before: Option<&ItemId>,
        dismissed: &HashSet<ItemId>,
        pinned: &BTreeSet<ItemId>,
    ) -> Result<PageRead> {
        let cap = Cap::judge(cap, Cap::clamped(self.default_cap)).get() as usize;
        let mut budget = Budget::new(cap);
        let now = self.clock.now_ms();

        let source = source_of(ws, viewer, filter);
        let hidden: HashSet<ItemId> = dismissed.iter().chain(pinned).cloned().collect();
        let (plan, listing_cut, listed) = self
            .plan_markers(&source, now, &hidden, budget.candidates(), before)
            .await?;
        for name in &plan.unparsable {
            tracing::warn!(ws = %ws, name, "skipping a marker whose name is not an id");
        }
        let asked = Asked {
            ws,
            viewer,
            filter,
            before,
            cap,
            now,
        };
        let mut resolved = self.resolve(&asked, &plan, &mut budget).await;
        resolved.cards.sort_by(|a, b| a.id.cmp(&b.id));
        // Not past a candidate left unresolved: its card would belong before them, and a next
        // page (after the last card shown) would never show it.
        if let Some(next) = plan.candidates.get(resolved.count).map(ItemId::to_string) {
            resolved.cards.retain(|c| c.id < next);
        }
        let prune = prune_of(&asked, dismissed, resolved.dead);
        let mut unread = resolved.unread;
        let mut cards = resolved.cards;
        let more = cards.len() > cap || resolved.count < plan.candidates.len() || listing_cut;
        cards.truncate(cap);
        let pins = match before {
            None => self.pinned_cards(ws, pinned, now).await,
            Some(_) => Default::default(),
        };
        cards.splice(0..0, pins.cards);
        unread.extend(pins.unread);
        let page = SharedPage::new(RecentPage {
            cards,
            more,
            partial: resolved.partial || pins.partial,
            generated_at: super::core::record::ms_to_time(now)
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        });
        Ok(PageRead {
            page,
            prune,
            listed,
            unread,
        })
    }

    /// Resolve the plan's candidates newest first, N keys at a time (each with its rivals),
    /// until N certain cards or the budget is spent. The markers to delete start with those
    /// the plan deletes by name, then those found dead by their records.
    async fn resolve(&self, asked: &Asked<'_>, plan: &Plan, budget: &mut Budget) -> Resolved {
        let cap = asked.cap;
        let mut done = Resolved {
            dead: plan.delete.clone(),
            ..Resolved::default()
        };
        // A rival shown in place of its key's newest id may sort after the next key's card: a
        // card is certain only once every candidate before it is resolved.
        let certain = |cards: &[Card], resolved: usize| match plan.candidates.get(resolved) {
            Some(next) => cards.iter().filter(|c| c.id < next.to_string()).count(),
            None => cards.len(),
        };
        while certain(&done.cards, done.count) < cap
            && budget.left() > 0
            && done.count < plan.candidates.len()
        {
            let n = cap
                .min(budget.left())
                .min(plan.candidates.len() - done.count);
            let groups = plan.batch(done.count, n);
            if let Some(unread) = &self.unread {
                // A live copy that lacks some of these records stops here: which batch comes
                // next depends on what they say, so the page waits for them.
                done.unread = unread.among(asked.ws, groups.iter().flatten().copied());
                if !done.unread.is_empty() {
                    break;
                }
            }
            done.count += n;
            self.resolve_groups(asked, groups, budget, &mut done).await;
        }
        done
    }

    /// Read every run of each group (a key's newest run and its rivals) at once, then settle
    /// each key: its card, its dead runs, the runs that could not be read.
    async fn resolve_groups(
        &self,
        asked: &Asked<'_>,
        groups: Vec<Vec<&ItemId>>,
        budget: &mut Budget,
        done: &mut Resolved,
    ) {
        let ws = asked.ws;
        let lookups =
            futures::future::join_all(groups.iter().flatten().map(|id| self.lookup(ws, id))).await;
        let mut lookups = lookups.into_iter();
        for group in groups {
            let runs: Vec<(ItemId, Verdict)> = group
                .into_iter()
                .zip(lookups.by_ref())
                .map(|(id, lookup)| (id.clone(), judge(id, lookup, asked.now, &self.limits)))
                .collect();
            let settled = settle(runs);
            // One key is one resolve, however many rivals it has: a key's rivals cost at
            // most RIVALS_PER_KEY more reads, and counting them would spend the budget on
            // keys before it reaches the ones whose cards the page needs.
            budget.spend(settled.shown.is_none() && !settled.unknown.is_empty());
            done.dead.extend(settled.dead);
            for (id, why) in settled.unknown {
                tracing::warn!(ws = %ws, id = %id, why, "could not resolve an item; keeping its marker");
                done.partial = true;
            }
            if let Some((shown, card)) = settled.shown {
                // A key whose newest run is before the cursor, settled on a run before it
                // too, was shown on an earlier page.
                let earlier = asked.before.is_some_and(|cursor| shown <= *cursor);
                let wanted = asked.filter == Filter::All || card.owner.sub == asked.viewer.as_str();
                if !earlier && wanted {
                    done.cards.push(card);
                }
            }
        }
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
    ) -> Result<(Plan, bool, usize)> {
        let ages = Ages {
            now_ms: now,
            ttl_ms: self.limits.ttl_ms,
            max_skew_ms: self.limits.max_skew_ms,
        };
        if self.store.order() == ListOrder::Unsorted {
            // The whole listing (the file system has no order); planning stops at the budget,
            // so what lies beyond is left to the janitor.
            let found = self.list_all(scope).await?;
            let (plan, cut) = Listing::from(&*found).plan(ages, dismissed, budget, before);
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
                        Listing::from(&*found).plan(ages, dismissed, usize::MAX, before);
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

    /// `viewer`'s last look at `ws`, or `None` when they never looked. A read that fails, or
    /// a look that does not parse, is an error, never "never looked". Read straight from the
    /// store, never through the read cache: another device of the viewer's may have written it.
    pub async fn looked(&self, ws: &Workspace, viewer: &UserId) -> Result<LastLook> {
        let at = self.store.look(ws, viewer).await?;
        Ok(LastLook {
            at: at.map(look_time),
        })
    }

    /// The ids this viewer dismissed in `ws` (through the read cache when there is one).
    async fn dismissals(&self, ws: &Workspace, viewer: &UserId) -> Result<HashSet<ItemId>> {
        let scope = Scope::Dismissals(ws.clone(), viewer.clone());
        let found = match &self.cache {
            Some(cache) => cache.list_or_before(&scope).await?,
            None => Arc::new(self.store.list(&scope).await?),
        };
        Ok(found.ids().cloned().collect())
    }

    /// Read one record (through the read cache when there is one). Errors are `Failed`, never
    /// `NotFound`.
    pub(crate) async fn lookup(&self, ws: &Workspace, id: &ItemId) -> RecordLookup {
        let key = Key::Record(ws.clone(), id.clone());
        RecordLookup::from(match &self.cache {
            Some(cache) => cache.read(&key).await,
            None => self.store.read(&key).await,
        })
    }
}

/// A record's read, for the resolver: an error is "unknown", never "not found".
impl From<crate::index::store::Result<Option<Stored>>> for RecordLookup {
    fn from(read: crate::index::store::Result<Option<Stored>>) -> Self {
        match read {
            Ok(Some(stored)) => RecordLookup::Found(stored.bytes),
            Ok(None) => RecordLookup::NotFound,
            Err(e) => RecordLookup::Failed(e.to_string()),
        }
    }
}

/// What one page read asks: whose page, which filter, after which cursor, how many cards, at
/// what time.
struct Asked<'a> {
    ws: &'a Workspace,
    viewer: &'a UserId,
    filter: Filter,
    before: Option<&'a ItemId>,
    cap: usize,
    now: u64,
}

/// What resolving the candidates found.
#[derive(Default)]
struct Resolved {
    cards: Vec<Card>,
    /// A record could not be read: the page may lack its card.
    partial: bool,
    /// How many candidates were resolved (from the first).
    count: usize,
    /// Markers to delete, by id: planned by name, then found dead by their records.
    dead: Vec<(ItemId, Reason)>,
    /// The next batch's records a live copy has not read: resolving stopped before them.
    unread: Vec<ItemId>,
}

/// The keys to delete after the answer, for the markers found dead.
/// The listing a page of `filter` is planned from. "Mine" lists the viewer's own markers: its
/// cost does not depend on how busy the workspace is.
fn source_of(ws: &Workspace, viewer: &UserId, filter: Filter) -> Scope {
    match filter {
        Filter::All => Scope::Markers(ws.clone()),
        Filter::Mine => Scope::OwnerMarkers(ws.clone(), viewer.clone()),
    }
}

fn prune_of(asked: &Asked<'_>, dismissed: &HashSet<ItemId>, dead: Vec<(ItemId, Reason)>) -> Prune {
    let (ws, viewer) = (asked.ws, asked.viewer);
    let mut prune = Prune::default();
    for (id, reason) in dead {
        // A viewer's dismissal of an item that is going away goes with it, after it.
        let dismissal = dismissed
            .contains(&id)
            .then(|| Key::Dismissal(ws.clone(), viewer.clone(), id.clone()));
        if asked.filter == Filter::Mine {
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
    prune
}

/// A complete listing of markers, as the pure core plans from it.
impl From<&Found> for Listing {
    fn from(found: &Found) -> Self {
        Listing::from_ids(found.ids().cloned(), found.strays.clone())
    }
}

/// A record that exists but is not one (or not one this version can read).
pub(super) fn unreadable(id: &ItemId) -> IndexError {
    IndexError::UnreadableRecord(id.clone())
}
