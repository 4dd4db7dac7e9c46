//! A fact: what one write changed in one workspace, as a watcher applies it to its copy and as
//! it travels between servers on the bus. It carries the record itself and the version the
//! store wrote it at, so no watcher reads the store to learn what a write did, nor reads the
//! record again at its next reconcile.

use crate::index::store::{Key, Version};
use crate::index::{ItemId, ItemRecord, UserId, Workspace};
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
            | Change::Dismissed { id, .. } => Some(id),
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
            Change::Deleted { keys } => WireChange::Deleted {
                keys: keys.iter().map(|k| k.path().to_string()).collect(),
            },
        };
        WireFact {
            ws: f.ws.to_string(),
            change,
        }
    }
}

impl TryFrom<WireFact> for Fact {
    type Error = String;

    fn try_from(w: WireFact) -> Result<Self, String> {
        let ws = Workspace::parse(&w.ws).map_err(|e| e.to_string())?;
        let id = |s: &str| ItemId::parse(s).map_err(|e| e.to_string());
        let user = |s: &str| UserId::parse(s).map_err(|e| e.to_string());
        let change = match w.change {
            WireChange::Record {
                record,
                registered,
                version,
            } => {
                if record.ws != ws.as_str() {
                    return Err("a record of another workspace".into());
                }
                // A version this server cannot read costs a read at the next reconcile, not
                // the fact.
                let version = version.and_then(|v| Version::from_validator(&v).ok());
                Change::Record {
                    id: id(&record.id)?,
                    record,
                    registered,
                    version,
                }
            }
            WireChange::Removed { id: i, owner } => Change::Removed {
                id: id(&i)?,
                owner: user(&owner)?,
            },
            WireChange::Dismissed { user: u, id: i } => Change::Dismissed {
                user: user(&u)?,
                id: id(&i)?,
            },
            WireChange::Deleted { keys } => Change::Deleted {
                keys: keys
                    .iter()
                    .map(|k| {
                        Key::parse(&object_store::path::Path::from(k.as_str()))
                            .filter(|k| k.ws() == &ws)
                            .ok_or_else(|| format!("not a key of {ws}: {k:?}"))
                    })
                    .collect::<Result<_, _>>()?,
            },
        };
        Ok(Fact { ws, change })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{NewItem, SubKey};
    use app::model::Owner;

    fn record_fact(version: Option<Version>) -> Fact {
        let ws = Workspace::parse("acme").unwrap();
        let id = ItemId::new(1_700_000_000_000, SubKey::parse("k").unwrap()).unwrap();
        let item = NewItem {
            key: "k".into(),
            title: "t".into(),
            url: None,
            status: None,
            progress: None,
        };
        let owner = Owner {
            sub: "ada".into(),
            name: "Ada".into(),
        };
        let record = ItemRecord::new(&ws, &id, &item, owner).unwrap();
        Fact::record(&ws, &record, true, version).unwrap()
    }

    fn round_trip(fact: &Fact) -> Fact {
        let wire = serde_json::to_string(&WireFact::from(fact)).unwrap();
        Fact::try_from(serde_json::from_str::<WireFact>(&wire).unwrap()).unwrap()
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
            assert_eq!(round_trip(&fact), fact);
        }
        let mut wire = serde_json::to_value(WireFact::from(&record_fact(None))).unwrap();
        wire["version"] = "".into();
        let bad = serde_json::from_value::<WireFact>(wire).unwrap();
        let Change::Record { version, .. } = Fact::try_from(bad).unwrap().change else {
            panic!("a record fact");
        };
        assert_eq!(
            version, None,
            "a malformed version is dropped, the fact kept"
        );
    }
}
