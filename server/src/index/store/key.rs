//! Pickup's key space, typed: every object Pickup writes is a [`Key`], every listing a
//! [`Scope`]. Paths are made here and parsed back here, nowhere else.

use crate::index::ItemId;
use crate::index::{UserId, Workspace};
use object_store::path::Path;

/// One key Pickup writes. Every part was validated before it got here. Keys of one scope
/// order as their paths list (newest item first).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// `markers/{ws}/{id}`: the item is listed.
    Marker(Workspace, ItemId),
    /// `items/{ws}/{id}.json`: the item's record.
    Record(Workspace, ItemId),
    /// `dismissed/{ws}/{user}/{id}`: this viewer dismissed the item.
    Dismissal(Workspace, UserId, ItemId),
    /// `owners/{ws}/{user}/{id}`: the item is listed among its owner's (the "Mine" filter).
    OwnerMarker(Workspace, UserId, ItemId),
}

/// The top-level prefixes under which a workspace can have keys.
pub const ROOTS: [&str; 4] = ["markers", "items", "dismissed", "owners"];

const RECORD_SUFFIX: &str = ".json";

impl Key {
    pub fn path(&self) -> Path {
        Path::from(match self {
            Key::Marker(ws, id) => format!("markers/{ws}/{id}"),
            Key::Record(ws, id) => format!("items/{ws}/{id}{RECORD_SUFFIX}"),
            Key::Dismissal(ws, user, id) => format!("dismissed/{ws}/{user}/{id}"),
            Key::OwnerMarker(ws, user, id) => format!("owners/{ws}/{user}/{id}"),
        })
    }

    /// The key a path names, if it is one of Pickup's and every part is valid.
    pub fn parse(path: &Path) -> Option<Key> {
        let parts: Vec<_> = path.parts().collect();
        let part = |i: usize| parts.get(i).map(|p| p.as_ref());
        let ws = || Workspace::parse(part(1)?).ok();
        let user = || UserId::parse(part(2)?).ok();
        let id = |i: usize| ItemId::parse(part(i)?).ok();
        match (part(0)?, parts.len()) {
            ("markers", 3) => Some(Key::Marker(ws()?, id(2)?)),
            ("items", 3) => {
                let id = ItemId::parse(part(2)?.strip_suffix(RECORD_SUFFIX)?).ok()?;
                Some(Key::Record(ws()?, id))
            }
            ("dismissed", 4) => Some(Key::Dismissal(ws()?, user()?, id(3)?)),
            ("owners", 4) => Some(Key::OwnerMarker(ws()?, user()?, id(3)?)),
            _ => None,
        }
    }

    pub fn ws(&self) -> &Workspace {
        match self {
            Key::Marker(ws, _)
            | Key::Record(ws, _)
            | Key::Dismissal(ws, _, _)
            | Key::OwnerMarker(ws, _, _) => ws,
        }
    }

    pub fn id(&self) -> &ItemId {
        match self {
            Key::Marker(_, id)
            | Key::Record(_, id)
            | Key::Dismissal(_, _, id)
            | Key::OwnerMarker(_, _, id) => id,
        }
    }

    /// What kind of key it is, for counts in logs and reports.
    pub fn kind(&self) -> KeyKind {
        match self {
            Key::Marker(..) => KeyKind::Marker,
            Key::Record(..) => KeyKind::Record,
            Key::Dismissal(..) => KeyKind::Dismissal,
            Key::OwnerMarker(..) => KeyKind::OwnerMarker,
        }
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.path())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyKind {
    Marker,
    Record,
    Dismissal,
    OwnerMarker,
}

impl KeyKind {
    /// Its name as a metric label.
    pub fn label(self) -> &'static str {
        match self {
            KeyKind::Marker => "marker",
            KeyKind::Record => "record",
            KeyKind::Dismissal => "dismissal",
            KeyKind::OwnerMarker => "owner_marker",
        }
    }

    pub fn plural(self) -> &'static str {
        match self {
            KeyKind::Marker => "markers",
            KeyKind::Record => "records",
            KeyKind::Dismissal => "dismissals",
            KeyKind::OwnerMarker => "owner markers",
        }
    }
}

/// What a listing covers: the keys of one kind in a workspace, or of one user in it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Every item listed in the workspace.
    Markers(Workspace),
    /// The items one user owns (what "Mine" lists).
    OwnerMarkers(Workspace, UserId),
    /// Every owner marker of the workspace (the janitor's).
    AllOwnerMarkers(Workspace),
    /// What one viewer dismissed.
    Dismissals(Workspace, UserId),
    /// Every dismissal of the workspace (the janitor's).
    AllDismissals(Workspace),
    /// Every record of the workspace (the janitor's).
    Records(Workspace),
}

impl Scope {
    pub fn ws(&self) -> &Workspace {
        match self {
            Scope::Markers(ws)
            | Scope::OwnerMarkers(ws, _)
            | Scope::AllOwnerMarkers(ws)
            | Scope::Dismissals(ws, _)
            | Scope::AllDismissals(ws)
            | Scope::Records(ws) => ws,
        }
    }

    /// The directory listed, without a trailing delimiter.
    pub fn prefix(&self) -> Path {
        Path::from(match self {
            Scope::Markers(ws) => format!("markers/{ws}"),
            Scope::OwnerMarkers(ws, user) => format!("owners/{ws}/{user}"),
            Scope::AllOwnerMarkers(ws) => format!("owners/{ws}"),
            Scope::Dismissals(ws, user) => format!("dismissed/{ws}/{user}"),
            Scope::AllDismissals(ws) => format!("dismissed/{ws}"),
            Scope::Records(ws) => format!("items/{ws}"),
        })
    }

    /// The key of the item `id` in this scope, where a scope has one key per item (the
    /// offset a listing after `id` starts from).
    pub fn key_of(&self, id: &ItemId) -> Option<Key> {
        match self {
            Scope::Markers(ws) => Some(Key::Marker(ws.clone(), id.clone())),
            Scope::OwnerMarkers(ws, user) => {
                Some(Key::OwnerMarker(ws.clone(), user.clone(), id.clone()))
            }
            Scope::Dismissals(ws, user) => {
                Some(Key::Dismissal(ws.clone(), user.clone(), id.clone()))
            }
            Scope::Records(ws) => Some(Key::Record(ws.clone(), id.clone())),
            Scope::AllOwnerMarkers(_) | Scope::AllDismissals(_) => None,
        }
    }

    /// Whether `key` belongs to this scope.
    pub fn contains(&self, key: &Key) -> bool {
        match (self, key) {
            (Scope::Markers(ws), Key::Marker(k, _)) | (Scope::Records(ws), Key::Record(k, _)) => {
                ws == k
            }
            (Scope::OwnerMarkers(ws, user), Key::OwnerMarker(k, u, _))
            | (Scope::Dismissals(ws, user), Key::Dismissal(k, u, _)) => ws == k && user == u,
            (Scope::AllOwnerMarkers(ws), Key::OwnerMarker(k, ..))
            | (Scope::AllDismissals(ws), Key::Dismissal(k, ..)) => ws == k,
            _ => false,
        }
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/", self.prefix())
    }
}

/// What a listing found: Pickup's keys of the scope, and the names there that are not
/// (kept and logged by the caller, never deleted).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Found {
    pub keys: Vec<Key>,
    pub strays: Vec<String>,
}

impl Found {
    /// Sort a path listed under `scope` into keys and strays.
    pub(super) fn push(&mut self, scope: &Scope, path: &Path) {
        match Key::parse(path) {
            Some(key) if scope.contains(&key) => self.keys.push(key),
            _ => self
                .strays
                .push(path.filename().unwrap_or_default().to_string()),
        }
    }

    /// The ids of the keys found.
    pub fn ids(&self) -> impl Iterator<Item = &ItemId> {
        self.keys.iter().map(Key::id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> Workspace {
        Workspace::parse("acme").unwrap()
    }

    fn item(key: &str) -> ItemId {
        ItemId::new(1_700_000_000_000, crate::index::SubKey::parse(key).unwrap()).unwrap()
    }

    #[test]
    fn every_key_parses_back_from_its_path() {
        let id = item("k");
        let user = UserId::parse("ada").unwrap();
        for key in [
            Key::Marker(ws(), id.clone()),
            Key::Record(ws(), id.clone()),
            Key::Dismissal(ws(), user.clone(), id.clone()),
            Key::OwnerMarker(ws(), user.clone(), id.clone()),
        ] {
            assert_eq!(Key::parse(&key.path()), Some(key.clone()), "{key}");
        }
        for stray in [
            "markers/acme",
            "markers/acme/not-an-id",
            "items/acme/x.txt",
            "dismissed/acme/ada",
            "clock/123",
            "markers/acme/a/b",
        ] {
            assert_eq!(Key::parse(&Path::from(stray)), None, "{stray}");
        }
    }

    #[test]
    fn a_listing_keeps_only_its_scopes_keys() {
        let id = item("k");
        let scope = Scope::Markers(ws());
        let mut found = Found::default();
        found.push(&scope, &Key::Marker(ws(), id.clone()).path());
        found.push(&scope, &Path::from("markers/acme/junk"));
        found.push(&scope, &Key::Record(ws(), id.clone()).path());
        assert_eq!(found.keys, vec![Key::Marker(ws(), id.clone())]);
        assert_eq!(found.strays, vec!["junk".to_string(), format!("{id}.json")]);
    }
}
