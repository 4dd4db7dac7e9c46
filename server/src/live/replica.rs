//! A watcher's copy of one workspace: its markers, owner markers, dismissals and records, in
//! memory ([`MemoryIndex`]). Pages are read from the copy by the index's own read path
//! ([`Index::recent`] over memory), so a live page is the page `GET /recent` would give for the
//! same keys, by construction. Writes reach the copy as facts; the store is listed only to
//! reconcile ([`Index::versions`]).

use super::fact::{Change, Fact};
use crate::index::{Index, IndexError, ItemId, Key, KeyKind, MemoryIndex, PageRead, Version};
use crate::index::{UserId, Workspace};
use app::contract::{Filter, ItemRecord};
use bytes::Bytes;
use std::collections::{BTreeSet, HashMap};
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

pub(super) struct Replica {
    ws: Workspace,
    copy: MemoryIndex,
    /// The version each record had when the store was last listed: a reconcile reads only the
    /// records whose version moved on.
    listed: HashMap<ItemId, Version>,
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

/// What a reconcile read of the records: the copy's next records, held and as listed.
#[derive(Default)]
struct Taken {
    held: HashMap<ItemId, ItemRecord>,
    listed: HashMap<ItemId, Version>,
}

fn record_bytes(record: &ItemRecord) -> Bytes {
    Bytes::from(serde_json::to_vec(record).expect("a record serialises"))
}

impl Replica {
    pub(super) fn new(ws: &Workspace, real: &Index) -> Self {
        Replica {
            ws: ws.clone(),
            copy: real.empty_copy(),
            listed: HashMap::new(),
            records: HashMap::new(),
            gone: HashMap::new(),
        }
    }

    /// This viewer's page, as `GET /recent` would give it from the same keys.
    pub(super) async fn page(
        &self,
        viewer: &UserId,
        filter: Filter,
        cap: u32,
    ) -> Result<PageRead, IndexError> {
        self.copy.page(&self.ws, viewer, filter, cap).await
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
                self.gone.insert(id.clone(), now);
                self.records.remove(id);
                Edits {
                    deletes: vec![
                        Key::Marker(ws.clone(), id.clone()),
                        Key::OwnerMarker(ws.clone(), owner.clone(), id.clone()),
                        Key::Record(ws.clone(), id.clone()),
                    ],
                    ..Edits::default()
                }
            }
            Change::Dismissed { user, id } => Edits {
                puts: vec![(
                    Key::Dismissal(ws.clone(), user.clone(), id.clone()),
                    Bytes::new(),
                )],
                ..Edits::default()
            },
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
        // A record the copy holds already (a reconcile read it, or a newer update came
        // first) is not written again; a registration's markers still are: the reconcile may
        // have listed the record but not yet the markers.
        let held = self.records.get(id);
        let same = held == Some(record);
        let newer = held.is_none_or(|held| held.updated_at <= record.updated_at && held != record);
        // The store holds this record at this version: the next reconcile, listing it there,
        // need not read it.
        match (newer || same, version) {
            (true, Some(version)) => {
                self.listed.insert(id.clone(), version.clone());
            }
            // A record the fact names no version for is not known to be the store's: the
            // next reconcile reads it again, whatever the store lists.
            (true, None) if newer => {
                self.listed.remove(id);
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
                self.gone.insert(id.clone(), now);
                self.records.remove(id);
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

    /// Make the copy what the store holds: list the workspace's four kinds of keys, and read
    /// the records that are new or whose version moved on since the last listing (all of them
    /// when `full`: after a gap, the copy's records are not trusted). An error leaves the copy
    /// as it was.
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
        let next = real.empty_copy();
        let taken = self
            .take_records(real, &next, records, full, &mut done)
            .await?;
        let before = self.keys().await;
        for key in &listed_keys {
            next.mark(key).await?;
        }
        if before != listed_keys || taken.held.len() != self.records.len() {
            done.drifted = true;
        }
        // What the store holds now wins over what was remembered as gone.
        self.gone.retain(|id, _| !taken.held.contains_key(id));
        self.copy = next;
        self.records = taken.held;
        self.listed = taken.listed;
        Ok(done)
    }

    /// Put the listed records into `next`: the copy's own when `full` is not asked and the
    /// version listed is the one held, else read from the store.
    async fn take_records(
        &self,
        real: &Index,
        next: &MemoryIndex,
        records: Vec<(Key, Version)>,
        full: bool,
        done: &mut Reconciled,
    ) -> Result<Taken, IndexError> {
        let mut taken = Taken::default();
        for (key, version) in records {
            let id = key.id().clone();
            let unchanged = !full && self.listed.get(&id) == Some(&version);
            let bytes = match (unchanged, self.records.get(&id)) {
                (true, Some(r)) => record_bytes(r),
                _ => {
                    done.reads += 1;
                    match real.bytes(&key).await? {
                        Some(bytes) => bytes,
                        // Gone between the listing and the read.
                        None => continue,
                    }
                }
            };
            // An unreadable record is held as it is: the read path says what it says of it.
            if let Ok(record) = serde_json::from_slice::<ItemRecord>(&bytes) {
                if self.records.get(&id) != Some(&record) {
                    done.drifted = true;
                }
                taken.held.insert(id.clone(), record);
            }
            next.put(&key, bytes).await?;
            taken.listed.insert(id, version);
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{Limits, ManualClock, Producer, Store};
    use app::contract::{NewItem, Status};
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
                url: None,
                status: Some(Status::Running),
                progress: None,
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

    fn shown(read: &PageRead) -> (Vec<(String, Status, bool)>, bool, bool) {
        let cards = read
            .page
            .cards
            .iter()
            .map(|c| (c.id.clone(), c.status, c.stalled))
            .collect();
        (cards, read.page.more, read.page.partial)
    }

    fn new_item(key: &str) -> NewItem {
        NewItem {
            key: key.into(),
            title: "t".into(),
            url: None,
            status: Some(Status::Running),
            progress: None,
        }
    }

    /// Workspace `acme` of an index on memory, its clock stopped at [`NOW`].
    fn memory_index() -> (Workspace, Index) {
        let store = Store::memory("memory://");
        let index = Index::new(store, Limits::default(), 8, Arc::new(ManualClock::new(NOW)));
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
        let page = replica.page(&ada.user, Filter::All, 10).await.unwrap();
        assert_eq!(page.page.cards.len(), 2);
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
        let page = replica.page(&ada.user, Filter::All, 10).await.unwrap();
        assert!(page.page.cards.is_empty());
        replica
            .apply(&Fact::record(&ws, &record, true, None).unwrap())
            .await;
        let page = replica.page(&ada.user, Filter::All, 10).await.unwrap();
        assert_eq!(page.page.cards.len(), 1, "the fact's markers are applied");
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
        let page = replica.page(&ada.user, Filter::All, 10).await.unwrap();
        assert_eq!(page.page.cards.len(), 1, "the store has it again");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// A live page (from a copy built by facts, or by a reconcile) is the REST page, for
        /// every viewer, filter, cap and number of dismissals.
        #[test]
        fn the_live_page_is_the_rest_page(items in items(), cap in 1u32..=50, mine in any::<bool>(), viewer_is_ada in any::<bool>()) {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                let (ws, real) = memory_index();
                let facts = write(&real, &ws, &items).await;
                let viewer = UserId::parse(if viewer_is_ada { "ada" } else { "bob" }).unwrap();
                let filter = if mine { Filter::Mine } else { Filter::All };
                let rest = real.recent(&ws, &viewer, filter, Some(cap), None).await.unwrap();
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
                let from_facts = by_facts.page(&viewer, filter, cap).await.unwrap();
                let from_store = reconciled.page(&viewer, filter, cap).await.unwrap();
                prop_assert_eq!(shown(&from_facts), shown(&rest), "built by facts");
                prop_assert_eq!(shown(&from_store), shown(&rest), "built by a reconcile");
                // Facts arriving again, or late, after a reconcile change nothing.
                for f in &facts {
                    reconciled.apply(f).await;
                }
                let again = reconciled.page(&viewer, filter, cap).await.unwrap();
                prop_assert_eq!(shown(&again), shown(&rest), "facts applied twice");
                Ok(())
            })?;
        }
    }
}
