//! A watcher's copy of one workspace: its markers, owner markers, dismissals and records, in
//! memory ([`MemoryIndex`]). Pages are read from the copy by the index's own read path
//! ([`Index::recent`] over memory), so a live page is the page `GET /recent` would give for the
//! same keys, by construction. Writes reach the copy as facts; the store is listed only to
//! reconcile ([`Index::versions`]).
//!
//! A record is read only when a page needs it ([`Replica::pages`]: the candidates a page
//! resolves, newest first, a batch at a time), or when a reconcile finds the one held out of
//! date; a fact's record is held from the fact. So a watcher starts with one listing and the
//! reads its pages need, however many items the workspace holds; the rest are listed, and
//! read if a page ever needs them.

use super::fact::{Change, Fact};
use super::view::WantedPage;
use crate::index::{CopyPage, Index, IndexError, ItemId, Key, KeyKind, MemoryIndex};
use crate::index::{Limits, UserId, Version, Workspace};
use app::contract::{ItemRecord, RecentPage};
use bytes::Bytes;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::{Duration, Instant};

/// What applying a fact did to the copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Applied {
    Changed,
    Unchanged,
    /// The fact and the copy disagree in a way only the store settles: reconcile.
    Doubtful,
}

/// How long an item removed (or deleted as dead) stays remembered as gone, so that a fact about
/// it that arrives late, from another server, does not bring it back.
const GONE_FOR: Duration = Duration::from_secs(600);

/// Records read from the store at once: a page's batch is its cap and their rivals, but a full
/// reconcile reads every record held, and a slow store should not get them all together.
const READS_AT_ONCE: usize = 16;

pub(super) struct Replica {
    ws: Workspace,
    copy: MemoryIndex,
    /// The version of each record held, when known (read at it, or a fact wrote it at it): a
    /// reconcile reads again a held record whose listed version is another or unknown.
    versions: HashMap<ItemId, Version>,
    /// The records as held, by id (to compare a fact's with).
    records: HashMap<ItemId, ItemRecord>,
    gone: HashMap<ItemId, Instant>,
}

/// What a reconcile did, for the operators' numbers.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Reconciled {
    pub(super) listings: usize,
    pub(super) reads: usize,
    /// Whether the copy differed from the store (a fact was missed).
    pub(super) drifted: bool,
}

/// What a fact asks of the copy: keys to hold (with their bytes), keys to drop.
#[derive(Debug, Default)]
struct Edits {
    puts: Vec<(Key, Bytes)>,
    deletes: Vec<Key>,
}

/// What a reconcile does with the records the store lists, decided from the listing and what
/// the copy holds alone ([`takes`]).
#[derive(Debug, Default, PartialEq)]
struct Takes {
    /// Held at the version listed: kept as held.
    keep: Vec<(ItemId, Version)>,
    /// Held at another version or an unknown one, or held at all when the copy is in doubt
    /// (`full`): read again now.
    read: Vec<ItemId>,
    /// Not held: listed only, read when a page needs it.
    unread: Vec<ItemId>,
    /// The store lists other records than the copy knows of: a write or a removal reached
    /// the store without a fact.
    drifted: bool,
}

/// Which listed records a reconcile keeps, reads again, or leaves unread. `held`: each record
/// the copy holds, with its version when known; `unread`: those it knows of only by a listing.
fn takes(
    listed: Vec<(ItemId, Version)>,
    held: &HashMap<ItemId, Option<Version>>,
    unread: &HashSet<ItemId>,
    full: bool,
) -> Takes {
    let mut takes = Takes::default();
    let count = listed.len();
    let mut known = 0;
    for (id, version) in listed {
        known += usize::from(held.contains_key(&id) || unread.contains(&id));
        match held.get(&id) {
            Some(Some(at)) if !full && *at == version => takes.keep.push((id, version)),
            Some(_) => takes.read.push(id),
            None => takes.unread.push(id),
        }
    }
    takes.drifted = known != count || count != held.len() + unread.len();
    takes
}

/// What a reconcile holds of the records: the copy's next records, and their versions.
#[derive(Default)]
struct Taken {
    held: HashMap<ItemId, ItemRecord>,
    versions: HashMap<ItemId, Version>,
}

fn record_bytes(record: &ItemRecord) -> Bytes {
    Bytes::from(serde_json::to_vec(record).expect("a record serialises"))
}

/// Each key's bytes as the store holds them now, a few reads at a time, in the order given.
async fn read_all(real: &Index, keys: &[Key]) -> Vec<Result<Option<(Bytes, Version)>, IndexError>> {
    let mut reads = Vec::with_capacity(keys.len());
    for some in keys.chunks(READS_AT_ONCE) {
        let at_once = some.iter().map(|key| real.stored(key));
        reads.extend(futures::future::join_all(at_once).await);
    }
    reads
}

impl Replica {
    pub(super) fn new(ws: &Workspace, real: &Index) -> Self {
        Replica {
            ws: ws.clone(),
            copy: real.empty_copy(),
            versions: HashMap::new(),
            records: HashMap::new(),
            gone: HashMap::new(),
        }
    }

    fn record_key(&self, id: &ItemId) -> Key {
        Key::Record(self.ws.clone(), id.clone())
    }

    /// Each page asked for, as `GET /recent` would give it from the same keys. A page that
    /// needs records the copy has not read stops before them; they are read (those of every
    /// page at once) and the pages computed again, until none needs one more. So a page is
    /// only ever computed from records held, and reads what `GET /recent` would read. An error
    /// reading one is the error of every page: none is sent without a card it needs.
    pub(super) async fn pages(
        &mut self,
        real: &Index,
        wanted: &[WantedPage],
    ) -> Result<HashMap<WantedPage, RecentPage>, IndexError> {
        loop {
            let mut pages = HashMap::new();
            let mut needed = BTreeSet::new();
            for want in wanted {
                let (viewer, filter) = (&want.viewer, want.filter());
                match self.copy.page(&self.ws, viewer, filter, want.cap).await? {
                    CopyPage::Page(read) => {
                        pages.insert(want.clone(), read.page.into_page());
                    }
                    CopyPage::Unread(ids) => needed.extend(ids),
                }
            }
            if needed.is_empty() {
                return Ok(pages);
            }
            // Each round reads at least one record the copy had not: it ends.
            self.read(real, needed).await?;
        }
    }

    /// The first instant after `now_ms` at which a page of this copy may change with no write:
    /// the earliest turn of a verdict among the records held.
    pub(super) fn next_change_ms(&self, now_ms: u64, limits: &Limits) -> Option<u64> {
        self.records
            .iter()
            .filter_map(|(id, record)| limits.next_change_ms(id, record, now_ms))
            .min()
    }

    /// Read these records into the copy, as the store holds them now.
    async fn read(&mut self, real: &Index, ids: BTreeSet<ItemId>) -> Result<(), IndexError> {
        let keys: Vec<Key> = ids.iter().map(|id| self.record_key(id)).collect();
        let reads = read_all(real, &keys).await;
        for ((id, key), read) in ids.into_iter().zip(&keys).zip(reads) {
            match read? {
                Some((bytes, version)) => {
                    if let Ok(record) = serde_json::from_slice::<ItemRecord>(&bytes) {
                        self.records.insert(id.clone(), record);
                    }
                    self.versions.insert(id, version);
                    self.copy.put(key, bytes).await?;
                }
                // Gone since the listing: the copy holds none either, and the read path says
                // of its marker what it would say reading the store now.
                None => self.copy.delete(key).await?,
            }
        }
        Ok(())
    }

    /// Apply one write. A record older than the one held (two servers' facts about one item,
    /// out of order) or an update of an item known gone changes nothing. A registration of an
    /// item known gone is either a late fact or its id registered again (same key, same
    /// millisecond): only the store can tell, so it is [`Applied::Doubtful`].
    pub(super) async fn apply(&mut self, fact: &Fact) -> Applied {
        let ws = &self.ws;
        let now = Instant::now();
        self.gone.retain(|_, at| now.duration_since(*at) < GONE_FOR);
        let edits = match &fact.change {
            Change::Record {
                id,
                record,
                registered,
                version,
            } => match self.record_edits(id, record, *registered, version) {
                Ok(edits) => edits,
                Err(applied) => return applied,
            },
            Change::Removed { id, owner } => {
                let edits = Edits {
                    deletes: vec![
                        Key::Marker(ws.clone(), id.clone()),
                        Key::OwnerMarker(ws.clone(), owner.clone(), id.clone()),
                        Key::Record(ws.clone(), id.clone()),
                    ],
                    ..Edits::default()
                };
                self.forget(id, now);
                edits
            }
            Change::Dismissed { user, id } => Edits {
                puts: vec![(
                    Key::Dismissal(ws.clone(), user.clone(), id.clone()),
                    Bytes::new(),
                )],
                ..Edits::default()
            },
            Change::Pinned { user, id, pinned } => {
                let key = Key::Pin(ws.clone(), user.clone(), id.clone());
                match pinned {
                    true => Edits {
                        puts: vec![(key, Bytes::new())],
                        ..Edits::default()
                    },
                    false => Edits {
                        deletes: vec![key],
                        ..Edits::default()
                    },
                }
            }
            Change::Deleted { keys } => self.deleted_edits(keys, now),
        };
        self.edit(edits).await
    }

    /// What a record's fact asks of the copy, or (as `Err`) why it asks nothing.
    fn record_edits(
        &mut self,
        id: &ItemId,
        record: &ItemRecord,
        registered: bool,
        version: &Option<Version>,
    ) -> Result<Edits, Applied> {
        let ws = &self.ws;
        if self.gone.contains_key(id) {
            return Err(if registered {
                Applied::Doubtful
            } else {
                Applied::Unchanged
            });
        }
        let mut edits = Edits::default();
        // A record the copy holds already (read, or a newer update came first) is not written
        // again (one listed but not read is held from the fact, no read needed); a registration's markers still are: the reconcile may
        // have listed the record but not yet the markers.
        let held = self.records.get(id);
        let same = held == Some(record);
        let newer = held.is_none_or(|held| held.updated_at <= record.updated_at && held != record);
        // The store holds this record at this version: the next reconcile, listing it there,
        // need not read it.
        match (newer || same, version) {
            (true, Some(version)) => {
                self.versions.insert(id.clone(), version.clone());
            }
            // A record the fact names no version for is not known to be the store's: the
            // next reconcile reads it again, whatever the store lists.
            (true, None) if newer => {
                self.versions.remove(id);
            }
            _ => {}
        }
        if newer {
            let key = Key::Record(ws.clone(), id.clone());
            edits.puts.push((key, record_bytes(record)));
            self.records.insert(id.clone(), record.clone());
        }
        if registered {
            if let Ok(owner) = UserId::parse(&record.owner.sub) {
                let key = Key::OwnerMarker(ws.clone(), owner, id.clone());
                edits.puts.push((key, Bytes::new()));
            }
            edits
                .puts
                .push((Key::Marker(ws.clone(), id.clone()), Bytes::new()));
        }
        if edits.puts.is_empty() {
            return Err(Applied::Unchanged);
        }
        Ok(edits)
    }

    /// What a fact of keys deleted as dead asks of the copy: a dead marker's record goes
    /// with it (`Index::apply`).
    fn deleted_edits(&mut self, keys: &[Key], now: Instant) -> Edits {
        let mut edits = Edits::default();
        for key in keys {
            if let Key::Marker(_, id) = key {
                self.forget(id, now);
                edits.deletes.push(Key::Record(self.ws.clone(), id.clone()));
            }
            edits.deletes.push(key.clone());
        }
        edits
    }

    async fn edit(&self, edits: Edits) -> Applied {
        let mut changed = false;
        for (key, bytes) in edits.puts {
            changed |= self.copy.put(&key, bytes).await.is_ok();
        }
        for key in edits.deletes {
            changed |= self.copy.delete(&key).await.is_ok();
        }
        if changed {
            Applied::Changed
        } else {
            Applied::Unchanged
        }
    }

    /// Make the copy what the store holds: list the workspace's four kinds of item keys (one
    /// listing, which no viewer's look is in: [`Index::versions`]), and read
    /// again the records held whose version moved on since (every record held when `full`:
    /// after a gap, what the copy holds is not trusted). Records not held are not read here:
    /// a page that needs one reads it. An error leaves the copy as it was.
    pub(super) async fn reconcile(
        &mut self,
        real: &Index,
        full: bool,
    ) -> Result<Reconciled, IndexError> {
        let mut done = Reconciled::default();
        // One listing of everything the workspace holds: the empty keys are what they say,
        // and a record's listed version tells whether the copy's is still current.
        let (records, listed_keys): (Vec<_>, Vec<_>) = real
            .versions(&self.ws)
            .await?
            .into_iter()
            .partition(|(key, _)| key.kind() == KeyKind::Record);
        let listed_keys: BTreeSet<Key> = listed_keys.into_iter().map(|(k, _)| k).collect();
        done.listings += 1;
        let listed: Vec<(ItemId, Version)> = records
            .into_iter()
            .filter_map(|(key, version)| Some((key.id()?.clone(), version)))
            .collect();
        let in_store: HashSet<ItemId> = listed.iter().map(|(id, _)| id.clone()).collect();
        let takes = takes(listed, &self.held(), &self.copy.unread_ids(&self.ws), full);
        done.drifted = takes.drifted;
        let next = real.empty_copy();
        let taken = self.take_records(real, &next, takes, &mut done).await?;
        let before = self.keys().await;
        for key in &listed_keys {
            next.mark(key).await?;
        }
        done.drifted |= before != listed_keys;
        // What the store holds now wins over what was remembered as gone.
        self.gone.retain(|id, _| !in_store.contains(id));
        self.copy = next;
        self.records = taken.held;
        self.versions = taken.versions;
        Ok(done)
    }

    /// Each record the copy holds, with the version it is held at when known.
    fn held(&self) -> HashMap<ItemId, Option<Version>> {
        self.records
            .keys()
            .chain(self.versions.keys())
            .map(|id| (id.clone(), self.versions.get(id).cloned()))
            .collect()
    }

    /// Put the listed records into `next` as [`takes`] decided: the copy's own where kept, read
    /// from the store where read, listed only where not held.
    async fn take_records(
        &self,
        real: &Index,
        next: &MemoryIndex,
        takes: Takes,
        done: &mut Reconciled,
    ) -> Result<Taken, IndexError> {
        let mut taken = Taken::default();
        for id in &takes.unread {
            next.hold_unread(&self.record_key(id));
        }
        let mut read = takes.read;
        for (id, version) in takes.keep {
            match self.records.get(&id) {
                Some(record) => {
                    next.put(&self.record_key(&id), record_bytes(record))
                        .await?;
                    taken.held.insert(id.clone(), record.clone());
                    taken.versions.insert(id, version);
                }
                // Held as bytes that are no record: the store's are read again.
                None => read.push(id),
            }
        }
        let keys: Vec<Key> = read.iter().map(|id| self.record_key(id)).collect();
        done.reads += keys.len();
        let reads = read_all(real, &keys).await;
        for ((id, key), stored) in read.into_iter().zip(&keys).zip(reads) {
            // None: gone between the listing and the read.
            let Some((bytes, version)) = stored? else {
                continue;
            };
            // An unreadable record is held as it is: the read path says what it says of it.
            if let Ok(record) = serde_json::from_slice::<ItemRecord>(&bytes) {
                if self.records.get(&id) != Some(&record) {
                    done.drifted = true;
                }
                taken.held.insert(id.clone(), record);
            }
            next.put(key, bytes).await?;
            taken.versions.insert(id, version);
        }
        Ok(taken)
    }

    /// The copy's empty keys (markers, owner markers, dismissals).
    async fn keys(&self) -> BTreeSet<Key> {
        match self.copy.versions(&self.ws).await {
            Ok(found) => found
                .into_iter()
                .map(|(k, _)| k)
                .filter(|k| k.kind() != KeyKind::Record)
                .collect(),
            Err(_) => BTreeSet::new(),
        }
    }

    /// An item is gone (removed, or deleted as dead): its record is held no more.
    fn forget(&mut self, id: &ItemId, now: Instant) {
        self.gone.insert(id.clone(), now);
        self.records.remove(id);
        self.versions.remove(id);
    }
}

#[cfg(test)]
mod tests {
    use super::super::requests::counting;
    use super::*;
    use crate::index::{Limits, ManualClock, Producer, SubKey};
    use app::contract::{Filter, NewItem, Status};
    use proptest::prelude::*;
    use std::sync::Arc;

    const NOW: u64 = 1_800_000_000_000;
    const MINUTE: u64 = 60_000;

    /// One item of a random workspace: its key, who owns it, how long ago it was registered
    /// and last written, what it says then, and whether the viewer dismissed it.
    #[derive(Debug, Clone)]
    struct Item {
        key: u8,
        owner: bool,
        age_min: u64,
        written_min: u64,
        status: u8,
        dismissed: bool,
        removed: bool,
    }

    fn items() -> impl Strategy<Value = Vec<Item>> {
        prop::collection::vec(
            (
                0u8..12,
                any::<bool>(),
                0u64..3000,
                0u64..3000,
                0u8..5,
                prop::bool::weighted(0.3),
                prop::bool::weighted(0.1),
            )
                .prop_map(
                    |(key, owner, age_min, written, status, dismissed, removed)| Item {
                        key,
                        owner,
                        age_min,
                        written_min: written.min(age_min),
                        status,
                        dismissed,
                        removed,
                    },
                ),
            0..45,
        )
    }

    fn producer(owner: bool) -> Producer {
        let sub = if owner { "ada" } else { "bob" };
        Producer {
            user: UserId::parse(sub).unwrap(),
            name: sub.to_uppercase(),
        }
    }

    /// Writes the items through `real` (each at its own time), returning the facts the
    /// service would have published for them.
    async fn write(real: &Index, ws: &Workspace, items: &[Item]) -> Vec<Fact> {
        let mut facts = Vec::new();
        let viewer = UserId::parse("ada").unwrap();
        // Each item at its own millisecond: an id registered again after its removal (same
        // key, same millisecond) is not told apart from a late fact about the first until the
        // next reconcile, and minutes alone would make that common here.
        for (i, it) in items.iter().enumerate() {
            let at = |min: u64| {
                real.clone()
                    .with_clock(Arc::new(ManualClock::new(NOW - min * MINUTE - i as u64)))
            };
            let new = NewItem {
                key: format!("k{}", it.key),
                title: "t".into(),
                status: Some(Status::Running),
                ..NewItem::default()
            };
            let who = producer(it.owner);
            let Ok(record) = at(it.age_min).register(ws, &new, &who).await else {
                continue;
            };
            facts.push(Fact::record(ws, &record, true, None).unwrap());
            let id = ItemId::parse(&record.id).unwrap();
            let status = [
                Status::Queued,
                Status::Running,
                Status::Succeeded,
                Status::Failed,
                Status::Cancelled,
            ][it.status as usize];
            let up = app::contract::ItemUpdate::new("t", status);
            if let Ok((updated, _)) = at(it.written_min)
                .update(ws, &id, &up, &who.user, None)
                .await
            {
                facts.push(Fact::record(ws, &updated, false, None).unwrap());
            }
            if it.dismissed {
                real.dismiss(ws, &viewer, &id).await.unwrap();
                facts.push(Fact {
                    ws: ws.clone(),
                    change: Change::Dismissed {
                        user: viewer.clone(),
                        id: id.clone(),
                    },
                });
            }
            if it.removed {
                real.remove(ws, &id, &who.user).await.unwrap();
                facts.push(Fact {
                    ws: ws.clone(),
                    change: Change::Removed {
                        id,
                        owner: who.user,
                    },
                });
            }
        }
        facts
    }

    fn shown(page: &RecentPage) -> (Vec<(String, Status, bool)>, bool, bool) {
        let cards = page
            .cards
            .iter()
            .map(|c| (c.id.clone(), c.status, c.stalled))
            .collect();
        (cards, page.more, page.partial)
    }

    /// One page from the copy, the records it needs read as it needs them.
    async fn live_page(
        replica: &mut Replica,
        real: &Index,
        viewer: &UserId,
        filter: Filter,
        cap: u32,
    ) -> RecentPage {
        let want = WantedPage {
            viewer: viewer.clone(),
            mine: filter == Filter::Mine,
            cap,
        };
        let mut pages = replica
            .pages(real, std::slice::from_ref(&want))
            .await
            .unwrap();
        pages.remove(&want).expect("the page asked for")
    }

    fn new_item(key: &str) -> NewItem {
        NewItem {
            key: key.into(),
            title: "t".into(),
            status: Some(Status::Running),
            ..NewItem::default()
        }
    }

    /// Workspace `acme` of an index on memory, its clock stopped at [`NOW`].
    fn memory_index() -> (Workspace, Index) {
        let clock = Arc::new(ManualClock::new(NOW));
        let index = Index::open("memory://", Limits::default(), 8, clock).unwrap();
        (Workspace::parse("acme").unwrap(), index)
    }

    /// Two registrations of one key in one millisecond: the second id is dated a millisecond
    /// ahead, and an update of it in that millisecond must still read as its later write.
    #[tokio::test]
    async fn an_update_is_dated_after_the_write_it_replaces() {
        let (ws, real) = memory_index();
        let ada = producer(true);
        real.register(&ws, &new_item("k"), &ada).await.unwrap();
        let second = real.register(&ws, &new_item("k"), &ada).await.unwrap();
        let id = ItemId::parse(&second.id).unwrap();
        let up = app::contract::ItemUpdate::new("t", Status::Succeeded);
        let (updated, _) = real.update(&ws, &id, &up, &ada.user, None).await.unwrap();
        assert!(updated.updated_at > second.updated_at);
        let mut replica = Replica::new(&ws, &real);
        for fact in [
            Fact::record(&ws, &second, true, None).unwrap(),
            Fact::record(&ws, &updated, false, None).unwrap(),
        ] {
            assert_eq!(replica.apply(&fact).await, Applied::Changed);
        }
    }

    /// A record whose fact carried the version it was written at is not read again by the
    /// next reconcile; one whose fact did not (from a server before versions travelled) is.
    #[tokio::test]
    async fn a_fact_with_its_version_spares_the_next_reconcile_a_read() {
        let (ws, real) = memory_index();
        let ada = producer(true);
        let mut replica = Replica::new(&ws, &real);
        replica.reconcile(&real, true).await.unwrap();
        let (known, version) = real
            .register_versioned(&ws, &new_item("a"), &ada)
            .await
            .unwrap();
        let unknown = real.register(&ws, &new_item("b"), &ada).await.unwrap();
        for fact in [
            Fact::record(&ws, &known, true, Some(version)).unwrap(),
            Fact::record(&ws, &unknown, true, None).unwrap(),
        ] {
            assert_eq!(replica.apply(&fact).await, Applied::Changed);
        }
        let done = replica.reconcile(&real, false).await.unwrap();
        assert_eq!((done.listings, done.reads), (1, 1));
        assert!(!done.drifted, "the facts said what the store holds");
        let page = live_page(&mut replica, &real, &ada.user, Filter::All, 10).await;
        assert_eq!(page.cards.len(), 2);
    }

    /// A viewer's look (`looked/{ws}/{user}`) is no item's: a look written between two
    /// reconciles is no drift, the copy never holds it, and it changes no page.
    #[tokio::test]
    async fn a_look_changes_nothing_in_a_copy() {
        let (ws, real) = memory_index();
        let ada = producer(true);
        real.register(&ws, &new_item("a"), &ada).await.unwrap();
        let mut replica = Replica::new(&ws, &real);
        replica.reconcile(&real, true).await.unwrap();
        let before = live_page(&mut replica, &real, &ada.user, Filter::All, 10).await;
        let keys = replica.keys().await;
        real.look(&ws, &ada.user, chrono::Utc::now()).await.unwrap();
        real.look(&ws, &producer(false).user, chrono::Utc::now())
            .await
            .unwrap();
        let done = replica.reconcile(&real, false).await.unwrap();
        assert_eq!((done.listings, done.reads, done.drifted), (1, 0, false));
        assert_eq!(replica.keys().await, keys);
        let held = replica.copy.versions(&ws).await.unwrap();
        assert!(
            held.iter().all(|(k, _)| k.kind() != KeyKind::Look),
            "{held:?}"
        );
        let after = live_page(&mut replica, &real, &ada.user, Filter::All, 10).await;
        assert_eq!(shown(&after), shown(&before));
        let done = replica.reconcile(&real, true).await.unwrap();
        assert!(!done.drifted);
    }

    /// A reconcile that listed the markers before a registration and the records after it
    /// holds the record without its markers; the registration's fact, whose record is the one
    /// held, still brings the markers (the card was missing until the next reconcile).
    #[tokio::test]
    async fn a_registration_met_half_way_by_a_reconcile_is_shown() {
        let (ws, real) = memory_index();
        let ada = producer(true);
        let record = real.register(&ws, &new_item("k"), &ada).await.unwrap();
        let id = ItemId::parse(&record.id).unwrap();
        let mut replica = Replica::new(&ws, &real);
        replica.reconcile(&real, true).await.unwrap();
        // As if the listing of markers had come before the registration: only the record.
        for key in [
            Key::Marker(ws.clone(), id.clone()),
            Key::OwnerMarker(ws.clone(), ada.user.clone(), id.clone()),
        ] {
            replica.copy.delete(&key).await.unwrap();
        }
        let page = live_page(&mut replica, &real, &ada.user, Filter::All, 10).await;
        assert!(page.cards.is_empty());
        replica
            .apply(&Fact::record(&ws, &record, true, None).unwrap())
            .await;
        let page = live_page(&mut replica, &real, &ada.user, Filter::All, 10).await;
        assert_eq!(page.cards.len(), 1, "the fact's markers are applied");
    }

    /// A registration of an id the copy saw removed is a late fact or the id registered
    /// again: the copy cannot tell, and asks the store.
    #[tokio::test]
    async fn a_gone_id_registered_again_is_doubtful() {
        let (ws, real) = memory_index();
        let ada = producer(true);
        let first = real.register(&ws, &new_item("k"), &ada).await.unwrap();
        let id = ItemId::parse(&first.id).unwrap();
        real.remove(&ws, &id, &ada.user).await.unwrap();
        let again = real.register(&ws, &new_item("k"), &ada).await.unwrap();
        assert_eq!(again.id, first.id, "the same key in the same millisecond");
        let mut replica = Replica::new(&ws, &real);
        let removed = Fact {
            ws: ws.clone(),
            change: Change::Removed {
                id: id.clone(),
                owner: ada.user.clone(),
            },
        };
        replica
            .apply(&Fact::record(&ws, &first, true, None).unwrap())
            .await;
        replica.apply(&removed).await;
        let registered = Fact::record(&ws, &again, true, None).unwrap();
        assert_eq!(replica.apply(&registered).await, Applied::Doubtful);
        replica.reconcile(&real, false).await.unwrap();
        let page = live_page(&mut replica, &real, &ada.user, Filter::All, 10).await;
        assert_eq!(page.cards.len(), 1, "the store has it again");
    }

    fn v(tag: &str) -> Version {
        Version {
            e_tag: Some(tag.into()),
            version: None,
        }
    }

    /// A reconcile keeps what it holds at the version listed, reads again what it holds at
    /// another or an unknown one (every held record when in doubt), and never reads a record
    /// it does not hold; the store listing other records than the copy knows is a drift.
    #[test]
    fn a_reconcile_reads_only_held_records_and_those_whose_version_moved_on() {
        let id = |n: u64| ItemId::new(NOW - n, SubKey::parse("k").unwrap()).unwrap();
        let listed = vec![
            (id(1), v("a")),
            (id(2), v("b")),
            (id(3), v("c")),
            (id(4), v("d")),
        ];
        let held = HashMap::from([
            (id(1), Some(v("a"))),
            (id(2), Some(v("old"))),
            (id(3), None),
        ]);
        let unread = HashSet::from([id(4)]);
        let expected = Takes {
            keep: vec![(id(1), v("a"))],
            read: vec![id(2), id(3)],
            unread: vec![id(4)],
            drifted: false,
        };
        assert_eq!(takes(listed.clone(), &held, &unread, false), expected);
        let full = takes(listed.clone(), &held, &unread, true);
        assert_eq!((full.keep, full.read), (vec![], vec![id(1), id(2), id(3)]));
        assert_eq!(full.unread, vec![id(4)], "in doubt, still not read");
        // A record the copy never heard of; one it knew of, gone.
        assert!(takes(listed.clone(), &held, &HashSet::new(), false).drifted);
        assert!(takes(listed[..3].to_vec(), &held, &unread, false).drifted);
        // A watcher's start: nothing held, nothing read.
        let start = takes(listed, &HashMap::new(), &HashSet::new(), true);
        assert_eq!(
            (start.keep.len(), start.read.len(), start.unread.len()),
            (0, 0, 4)
        );
    }

    /// A copy reconciled whole holds every key and reads no record; a page reads the records
    /// it shows, another page those it needs beyond them, a fact's record is held from the
    /// fact, and a reconcile in doubt reads again only what is held.
    #[tokio::test]
    async fn a_copy_reads_only_the_records_its_pages_need() {
        let (ws, real) = memory_index();
        let mut last = None;
        for i in 0..30u64 {
            let at = real.clone().with_clock(Arc::new(ManualClock::new(NOW - i)));
            let new = new_item(&format!("k{i}"));
            last = Some(at.register(&ws, &new, &producer(i % 2 == 0)).await.unwrap());
        }
        let mut replica = Replica::new(&ws, &real);
        let done = replica.reconcile(&real, true).await.unwrap();
        assert_eq!((done.listings, done.reads), (1, 0));
        assert_eq!(replica.copy.unread_ids(&ws).len(), 30);
        let ada = UserId::parse("ada").unwrap();
        let all = live_page(&mut replica, &real, &ada, Filter::All, 10).await;
        assert_eq!(all.cards.len(), 10);
        assert_eq!(replica.records.len(), 10, "the ten cards shown");
        // Ada's are every other item: five of her first ten are read already.
        let mine = live_page(&mut replica, &real, &ada, Filter::Mine, 10).await;
        assert_eq!(mine.cards.len(), 10);
        assert_eq!(replica.records.len(), 15);
        // The oldest item, never shown, is held from its fact.
        let record = last.unwrap();
        let up = app::contract::ItemUpdate::new("t", Status::Succeeded);
        let (id, bob) = (ItemId::parse(&record.id).unwrap(), producer(false).user);
        let (updated, validator) = real.update(&ws, &id, &up, &bob, None).await.unwrap();
        let version = Version::from_validator(&validator.unwrap()).unwrap();
        let fact = Fact::record(&ws, &updated, false, Some(version)).unwrap();
        assert_eq!(replica.apply(&fact).await, Applied::Changed);
        assert!(!replica.copy.unread_ids(&ws).contains(&id));
        assert_eq!(replica.records.len(), 16);
        let done = replica.reconcile(&real, false).await.unwrap();
        assert_eq!((done.reads, done.drifted), (0, false));
        let done = replica.reconcile(&real, true).await.unwrap();
        assert_eq!(
            done.reads, 16,
            "in doubt, what is held is read again, and only that"
        );
        assert_eq!(replica.copy.unread_ids(&ws).len(), 14);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// A live page (from a copy built by facts, or by a reconcile and read as its pages
        /// need) is the REST page, for every viewer, filter, cap and number of dismissals; a
        /// copy of the listing alone reads for its page what `GET /recent` reads.
        #[test]
        fn the_live_page_is_the_rest_page(items in items(), cap in 1u32..=50, other_cap in 1u32..=50, mine in any::<bool>(), viewer_is_ada in any::<bool>()) {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            counting(|requests| rt.block_on(async {
                let (ws, real) = memory_index();
                let facts = write(&real, &ws, &items).await;
                let viewer = UserId::parse(if viewer_is_ada { "ada" } else { "bob" }).unwrap();
                let filter = if mine { Filter::Mine } else { Filter::All };
                let gets = requests.of("get");
                let rest = real.recent(&ws, &viewer, filter, Some(cap), None).await.unwrap().page;
                let rest_reads = requests.of("get") - gets;
                let mut by_facts = Replica::new(&ws, &real);
                let mut doubtful = false;
                for f in &facts {
                    doubtful |= by_facts.apply(f).await == Applied::Doubtful;
                }
                // As the watcher does.
                if doubtful {
                    by_facts.reconcile(&real, false).await.unwrap();
                }
                let mut reconciled = Replica::new(&ws, &real);
                reconciled.reconcile(&real, true).await.unwrap();
                let from_facts = live_page(&mut by_facts, &real, &viewer, filter, cap).await;
                let gets = requests.of("get");
                let from_store = live_page(&mut reconciled, &real, &viewer, filter, cap).await;
                prop_assert_eq!(requests.of("get") - gets, rest_reads, "read what GET /recent reads");
                prop_assert_eq!(shown(&from_facts), shown(&rest), "built by facts");
                prop_assert_eq!(shown(&from_store), shown(&rest), "built by a reconcile");
                // The same half-read copy gives the other pages, reading what they lack.
                let other = if mine { Filter::All } else { Filter::Mine };
                for (filter, cap) in [(other, cap), (filter, other_cap)] {
                    let rest = real.recent(&ws, &viewer, filter, Some(cap), None).await.unwrap();
                    let live = live_page(&mut reconciled, &real, &viewer, filter, cap).await;
                    prop_assert_eq!(shown(&live), shown(&rest.page), "another page, half read");
                }
                // In doubt, what is held is read again; the page stays the REST page.
                reconciled.reconcile(&real, true).await.unwrap();
                let again = live_page(&mut reconciled, &real, &viewer, filter, cap).await;
                prop_assert_eq!(shown(&again), shown(&rest), "after a full reconcile");
                // Facts arriving again, or late, after a reconcile change nothing.
                for f in &facts {
                    reconciled.apply(f).await;
                }
                let again = live_page(&mut reconciled, &real, &viewer, filter, cap).await;
                prop_assert_eq!(shown(&again), shown(&rest), "facts applied twice");
                Ok(())
            }))?;
        }
    }
}
