//! A fact: what one write changed in one workspace, as a watcher applies it to its copy and as
//! it travels between servers on the bus. It carries the record itself and the version the
//! store wrote it at, so no watcher reads the store to learn what a write did, nor reads the
//! record again at its next reconcile.

use crate::index::{check_as_written, Index, IndexError, ItemId, Key, RecordError, Version};
use crate::index::{UserId, Workspace};
use app::contract::ItemRecord;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq)]
pub struct Fact {
    pub ws: Workspace,
    pub change: Change,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A record as written: registered (with its markers), updated, heartbeat or finished.
    Record {
        id: ItemId,
        record: Box<ItemRecord>,
        registered: bool,
        /// The version the store wrote it at (none from a store that names none).
        version: Option<Version>,
    },
    /// Removed by its owner: marker, owner marker and record are gone.
    Removed { id: ItemId, owner: UserId },
    /// A viewer dismissed an item.
    Dismissed { user: UserId, id: ItemId },
    /// A viewer pinned an item (`pinned`), or unpinned it.
    Pinned {
        user: UserId,
        id: ItemId,
        pinned: bool,
    },
    /// Keys a read or a sweep deleted as dead.
    Deleted { keys: Vec<Key> },
}

impl Fact {
    pub fn record(
        ws: &Workspace,
        record: &ItemRecord,
        registered: bool,
        version: Option<Version>,
    ) -> Option<Fact> {
        let id = ItemId::parse(&record.id).ok()?;
        Some(Fact {
            ws: ws.clone(),
            change: Change::Record {
                id,
                record: Box::new(record.clone()),
                registered,
                version,
            },
        })
    }

    /// The item this fact is about, if it is about one.
    pub fn item(&self) -> Option<&ItemId> {
        match &self.change {
            Change::Record { id, .. }
            | Change::Removed { id, .. }
            | Change::Dismissed { id, .. }
            | Change::Pinned { id, .. } => Some(id),
            Change::Deleted { .. } => None,
        }
    }

    /// The owner whose "Mine" page this fact may change, when it names one.
    pub fn owner(&self) -> Option<String> {
        match &self.change {
            Change::Record { record, .. } => Some(record.owner.sub.clone()),
            Change::Removed { owner, .. } => Some(owner.to_string()),
            _ => None,
        }
    }
}

/// A fact on the wire: names as strings, checked again when read (a peer on the bus is trusted
/// no more than a request is).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub(super) enum WireChange {
    Record {
        record: Box<ItemRecord>,
        registered: bool,
        /// The version as an `ETag` validator ([`Version::validator`]); absent from a server
        /// before versions travelled, and then the next reconcile reads the record.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        version: Option<String>,
    },
    Removed {
        id: String,
        owner: String,
    },
    Dismissed {
        user: String,
        id: String,
    },
    Pinned {
        user: String,
        id: String,
        pinned: bool,
    },
    Deleted {
        keys: Vec<String>,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct WireFact {
    pub(super) ws: String,
    #[serde(flatten)]
    pub(super) change: WireChange,
}

impl From<&Fact> for WireFact {
    fn from(f: &Fact) -> Self {
        let change = match &f.change {
            Change::Record {
                record,
                registered,
                version,
                ..
            } => WireChange::Record {
                record: record.clone(),
                registered: *registered,
                version: version.as_ref().and_then(Version::validator),
            },
            Change::Removed { id, owner } => WireChange::Removed {
                id: id.to_string(),
                owner: owner.to_string(),
            },
            Change::Dismissed { user, id } => WireChange::Dismissed {
                user: user.to_string(),
                id: id.to_string(),
            },
            Change::Pinned { user, id, pinned } => WireChange::Pinned {
                user: user.to_string(),
                id: id.to_string(),
                pinned: *pinned,
            },
            Change::Deleted { keys } => WireChange::Deleted {
                keys: keys.iter().map(Key::to_string).collect(),
            },
        };
        WireFact {
            ws: f.ws.to_string(),
            change,
        }
    }
}

/// Why a fact heard on the bus was refused: what a request saying the same would be refused for.
#[derive(Debug, thiserror::Error)]
pub(super) enum FactError {
    #[error(transparent)]
    Name(#[from] crate::index::NameError),
    #[error("item id: {0}")]
    Id(#[from] IndexError),
    #[error("record: {0}")]
    Record(#[from] RecordError),
    #[error("the record is dated later than now plus the clock skew")]
    FutureTime,
    #[error("{0} keys in one fact: at most {MAX_KEYS}")]
    TooManyKeys(usize),
    #[error("not a key of {ws}: {key:?}")]
    ForeignKey { ws: Workspace, key: String },
    #[error("not an item's key: {0:?}")]
    NotAnItemKey(String),
}

/// Keys one `deleted` fact may name: what one read's prune deletes, with room to spare.
const MAX_KEYS: usize = 1024;

impl Fact {
    /// A fact a peer published, checked as the same write arriving by HTTP would be: names
    /// parse, a record belongs to its workspace, id, key and owner and passes the body rules,
    /// no id is dated beyond now plus the clock skew (by `index`'s clock, as at the door).
    pub(super) fn from_wire(w: WireFact, index: &Index) -> Result<Fact, FactError> {
        let ws = Workspace::parse(&w.ws)?;
        let change = match w.change {
            WireChange::Record {
                record,
                registered,
                version,
            } => {
                let id = index.item_id(&record.id)?;
                check_as_written(&record, &ws, &id)?;
                // Its times are a server's, so no later than now plus the skew either: a time
                // ahead would make every true fact after it look older.
                let latest = index.clock().now_ms() + index.limits().max_skew_ms;
                let times = [
                    Some(record.updated_at),
                    record.heartbeat_at,
                    record.finished_at,
                ];
                if times
                    .iter()
                    .flatten()
                    .any(|t| t.timestamp_millis() > latest as i64)
                {
                    return Err(FactError::FutureTime);
                }
                // A version this server cannot read costs a read at the next reconcile, not
                // the fact.
                let version = version.and_then(|v| Version::from_validator(&v).ok());
                Change::Record {
                    id,
                    record,
                    registered,
                    version,
                }
            }
            WireChange::Removed { id, owner } => Change::Removed {
                id: index.item_id(&id)?,
                owner: UserId::parse(&owner)?,
            },
            WireChange::Dismissed { user, id } => Change::Dismissed {
                user: UserId::parse(&user)?,
                id: index.item_id(&id)?,
            },
            WireChange::Pinned { user, id, pinned } => Change::Pinned {
                user: UserId::parse(&user)?,
                id: index.item_id(&id)?,
                pinned,
            },
            WireChange::Deleted { keys } => {
                if keys.len() > MAX_KEYS {
                    return Err(FactError::TooManyKeys(keys.len()));
                }
                let keys =
                    keys.iter()
                        .map(|k| {
                            let key = Key::parse_str(k).filter(|key| key.ws() == &ws).ok_or_else(
                                || FactError::ForeignKey {
                                    ws: ws.clone(),
                                    key: k.clone(),
                                },
                            )?;
                            // Only an item's keys are deleted as dead (a look is no item's).
                            let id = key.id().ok_or_else(|| FactError::NotAnItemKey(k.clone()))?;
                            index.item_id(&id.to_string())?;
                            Ok(key)
                        })
                        .collect::<Result<_, FactError>>()?;
                Change::Deleted { keys }
            }
        };
        Ok(Fact { ws, change })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{Limits, ManualClock, SubKey};
    use app::contract::{NewItem, Owner};
    use std::sync::Arc;

    const NOW: u64 = 1_700_000_000_000;

    fn index() -> Index {
        let clock = Arc::new(ManualClock::new(NOW));
        Index::open("memory://", Limits::default(), 8, clock).unwrap()
    }

    fn record_fact(version: Option<Version>) -> Fact {
        let ws = Workspace::parse("acme").unwrap();
        let id = ItemId::new(NOW - 1000, SubKey::parse("k").unwrap()).unwrap();
        let item = NewItem {
            key: "k".into(),
            title: "t".into(),
            ..NewItem::default()
        };
        let owner = Owner {
            sub: "ada".into(),
            name: "Ada".into(),
        };
        let record = crate::index::core::record::new_record(&ws, &id, &item, owner).unwrap();
        Fact::record(&ws, &record, true, version).unwrap()
    }

    fn wire(fact: &Fact) -> serde_json::Value {
        serde_json::to_value(WireFact::from(fact)).unwrap()
    }

    fn read(wire: serde_json::Value) -> Result<Fact, FactError> {
        Fact::from_wire(serde_json::from_value::<WireFact>(wire).unwrap(), &index())
    }

    /// What a record's fact says travels whole, its version too: both an ETag alone and a
    /// version id (S3 with versioning, GCS's generation) come back as they went.
    #[test]
    fn a_record_fact_crosses_the_wire_with_its_version() {
        for version in [
            None,
            Some(Version {
                e_tag: Some("\"abc\"".into()),
                version: None,
            }),
            Some(Version {
                e_tag: Some("\"abc\"".into()),
                version: Some("17".into()),
            }),
        ] {
            let fact = record_fact(version);
            assert_eq!(read(wire(&fact)).unwrap(), fact);
        }
        let mut bad = wire(&record_fact(None));
        bad["version"] = "".into();
        let Change::Record { version, .. } = read(bad).unwrap().change else {
            panic!("a record fact");
        };
        assert_eq!(
            version, None,
            "a malformed version is dropped, the fact kept"
        );
    }

    /// A fact is refused for what a request saying the same would be refused for.
    #[test]
    fn a_fact_is_checked_as_a_request_would_be() {
        let good = wire(&record_fact(None));
        let bent = |path: &[&str], value: serde_json::Value| {
            let mut w = good.clone();
            let mut at = &mut w;
            for p in &path[..path.len() - 1] {
                at = &mut at[*p];
            }
            at[path[path.len() - 1]] = value;
            w
        };
        let future = ItemId::new(NOW + 3 * 60_000, SubKey::parse("k").unwrap()).unwrap();
        for (what, w) in [
            ("another workspace's record", bent(&["ws"], "beta".into())),
            (
                "a record of another workspace",
                bent(&["record", "ws"], "beta".into()),
            ),
            ("a bad workspace name", bent(&["ws"], "../x".into())),
            (
                "a record under another key",
                bent(&["record", "key"], "other".into()),
            ),
            (
                "an id dated beyond the skew",
                bent(&["record", "id"], future.to_string().into()),
            ),
            ("a malformed id", bent(&["record", "id"], "nope".into())),
            (
                "a bad owner",
                bent(&["record", "owner", "sub"], "a/b".into()),
            ),
            (
                "a title with a control character",
                bent(&["record", "title"], "a\u{7}b".into()),
            ),
            ("an empty title", bent(&["record", "title"], "".into())),
            (
                "a javascript: link",
                bent(&["record", "url"], "javascript:alert(1)".into()),
            ),
            ("progress past 1", bent(&["record", "progress"], 2.0.into())),
            (
                "an update dated ahead",
                bent(&["record", "updated_at"], "2099-01-01T00:00:00Z".into()),
            ),
        ] {
            assert!(read(w.clone()).is_err(), "{what} was taken: {w}");
        }
        let dismissal = |user: &str, id: &str| serde_json::json!({"ws": "acme", "change": "dismissed", "user": user, "id": id});
        let id = ItemId::new(NOW, SubKey::parse("k").unwrap())
            .unwrap()
            .to_string();
        assert!(read(dismissal("ada", &id)).is_ok());
        assert!(read(dismissal("a/b", &id)).is_err());
        assert!(read(dismissal("ada", &future.to_string())).is_err());
        let pin = |user: &str, id: &str| serde_json::json!({"ws": "acme", "change": "pinned", "user": user, "id": id, "pinned": true});
        assert!(read(pin("ada", &id)).is_ok());
        assert!(read(pin("a/b", &id)).is_err());
        assert!(read(pin("ada", &future.to_string())).is_err());
        let deleted = |keys: Vec<String>| serde_json::json!({"ws": "acme", "change": "deleted", "keys": keys});
        assert!(read(deleted(vec![format!("ws/acme/markers/{id}")])).is_ok());
        assert!(read(deleted(vec![format!("ws/beta/markers/{id}")])).is_err());
        assert!(read(deleted(vec![format!("ws/acme/markers/{future}")])).is_err());
        assert!(read(deleted(vec![format!("ws/acme/markers/{id}"); MAX_KEYS + 1])).is_err());
    }
}
