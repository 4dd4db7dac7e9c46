//! Pickup's key space as paths: every [`Key`] (the index's, `index/key.rs`) has one path here,
//! and every listing a [`Scope`]. Paths are made here and parsed back here, nowhere else.
//!
//! Workspace first (`ws/{ws}/markers/…`, `ws/{ws}/items/…`): one listing of `ws/{ws}/` is
//! every key a workspace's pages are made of, which is what a live watcher's reconcile reads.
//! Stores written before this layout have kind-first keys (`markers/{ws}/…`);
//! [`Key::parse_legacy`] reads those names so that `store::legacy` can move them.
//!
//! Most keys name an item ([`Key::id`]); a viewer's last look at a workspace ([`Key::Look`])
//! names none, and lives apart, under `looked/{ws}/{user}`: a workspace has a look for every
//! viewer it ever had, and under `ws/{ws}/` every reconcile listed them all (1,000 viewers
//! were 1,000 of 1,150 keys beside 50 items, and a second LIST request). Looks first kept
//! there (`ws/{ws}/looked/{user}`) are moved by the janitor (`store::look`). The old layout
//! never had looks.

use crate::index::ItemId;
use crate::index::{Key, KeyKind, UserId, Workspace};
use object_store::path::Path;

/// The prefix every workspace's keys live under.
pub(super) const ROOT: &str = "ws";

/// The top-level prefixes of the old kind-first layout, records first: the order
/// [`Key::parse_legacy`]'s keys are moved in, so that no marker arrives before its record.
pub(super) const LEGACY_ROOTS: [&str; 4] = ["items", "owners", "dismissed", "markers"];

const RECORD_SUFFIX: &str = ".json";

/// The prefix the viewers' looks live under (`looked/{ws}/{user}`); not one of
/// [`LEGACY_ROOTS`]: no old layout had looks.
pub(super) const LOOKED: &str = "looked";

/// The directory of the viewers' pins; newer than the old layout too.
const PINNED: &str = "pinned";

impl Key {
    pub fn path(&self) -> Path {
        match self {
            Key::Look(ws, user) => Path::from(format!("{LOOKED}/{ws}/{user}")),
            _ => {
                let (dir, name) = self.named();
                Path::from(format!("{ROOT}/{}/{dir}/{name}", self.ws()))
            }
        }
    }

    /// Where the old kind-first layout kept this key; `None` for a look or a pin, which it
    /// never had.
    pub fn legacy_path(&self) -> Option<Path> {
        if matches!(self.kind(), KeyKind::Look | KeyKind::Pin) {
            return None;
        }
        let (dir, name) = self.named();
        Some(Path::from(format!("{dir}/{}/{name}", self.ws())))
    }

    /// The directory of the key's kind, and the key's name in it: what both layouts are
    /// made of, in their two orders.
    fn named(&self) -> (&'static str, String) {
        match self {
            Key::Marker(_, id) => ("markers", id.to_string()),
            Key::Record(_, id) => ("items", format!("{id}{RECORD_SUFFIX}")),
            Key::Dismissal(_, user, id) => ("dismissed", format!("{user}/{id}")),
            Key::OwnerMarker(_, user, id) => ("owners", format!("{user}/{id}")),
            Key::Pin(_, user, id) => (PINNED, format!("{user}/{id}")),
            Key::Look(_, user) => (LOOKED, user.to_string()),
        }
    }

    /// The key a path names, if it is one of Pickup's and every part is valid.
    pub fn parse(path: &Path) -> Option<Key> {
        let parts: Vec<_> = path.parts().collect();
        match parts.iter().map(|p| p.as_ref()).collect::<Vec<_>>()[..] {
            [root, ws, kind, ref rest @ ..] if root == ROOT => Self::of_kind(ws, kind, rest),
            [root, ws, user] if root == LOOKED => Some(Key::Look(
                Workspace::parse(ws).ok()?,
                UserId::parse(user).ok()?,
            )),
            _ => None,
        }
    }

    /// The key a path's text names, as [`Key::parse`] reads it (the way a fact carries it).
    pub fn parse_str(path: &str) -> Option<Key> {
        Self::parse(&Path::from(path))
    }

    /// The key a path of the old kind-first layout named (`markers/{ws}/{id}`,
    /// `items/{ws}/{id}.json`, `dismissed/{ws}/{user}/{id}`, `owners/{ws}/{user}/{id}`).
    pub fn parse_legacy(path: &Path) -> Option<Key> {
        let parts: Vec<_> = path.parts().collect();
        match parts.iter().map(|p| p.as_ref()).collect::<Vec<_>>()[..] {
            [kind, ws, ref rest @ ..] if kind != LOOKED && kind != PINNED => {
                Self::of_kind(ws, kind, rest)
            }
            _ => None,
        }
    }

    /// The key of kind `kind` in workspace `ws` whose remaining path parts are `rest`.
    fn of_kind(ws: &str, kind: &str, rest: &[&str]) -> Option<Key> {
        let ws = Workspace::parse(ws).ok()?;
        let id = |s: &str| ItemId::parse(s).ok();
        let user = |s: &str| UserId::parse(s).ok();
        match (kind, rest) {
            ("markers", [i]) => Some(Key::Marker(ws, id(i)?)),
            ("items", [file]) => Some(Key::Record(ws, id(file.strip_suffix(RECORD_SUFFIX)?)?)),
            ("dismissed", [u, i]) => Some(Key::Dismissal(ws, user(u)?, id(i)?)),
            ("owners", [u, i]) => Some(Key::OwnerMarker(ws, user(u)?, id(i)?)),
            (PINNED, [u, i]) => Some(Key::Pin(ws, user(u)?, id(i)?)),
            _ => None,
        }
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.path())
    }
}

/// What a listing covers: the keys of one kind in a workspace, or of one user in it, or all
/// of a workspace's item keys.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Scope {
    /// Every key of the workspace's items, of every kind: what its pages are made of (a live
    /// watcher's reconcile). Not the viewers' looks, which live apart.
    Workspace(Workspace),
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
    /// What one viewer pinned.
    Pins(Workspace, UserId),
    /// Every pin of the workspace (the janitor's, a live watcher's).
    AllPins(Workspace),
    /// Every record of the workspace (the janitor's).
    Records(Workspace),
    /// Every viewer's look at the workspace (the janitor's).
    Looks(Workspace),
}

impl Scope {
    pub(crate) fn ws(&self) -> &Workspace {
        match self {
            Scope::Workspace(ws)
            | Scope::Markers(ws)
            | Scope::OwnerMarkers(ws, _)
            | Scope::AllOwnerMarkers(ws)
            | Scope::Dismissals(ws, _)
            | Scope::AllDismissals(ws)
            | Scope::Pins(ws, _)
            | Scope::AllPins(ws)
            | Scope::Records(ws)
            | Scope::Looks(ws) => ws,
        }
    }

    /// The directory listed, without a trailing delimiter.
    pub(crate) fn prefix(&self) -> Path {
        Path::from(match self {
            Scope::Workspace(ws) => format!("{ROOT}/{ws}"),
            Scope::Markers(ws) => format!("{ROOT}/{ws}/markers"),
            Scope::OwnerMarkers(ws, user) => format!("{ROOT}/{ws}/owners/{user}"),
            Scope::AllOwnerMarkers(ws) => format!("{ROOT}/{ws}/owners"),
            Scope::Dismissals(ws, user) => format!("{ROOT}/{ws}/dismissed/{user}"),
            Scope::AllDismissals(ws) => format!("{ROOT}/{ws}/dismissed"),
            Scope::Pins(ws, user) => format!("{ROOT}/{ws}/{PINNED}/{user}"),
            Scope::AllPins(ws) => format!("{ROOT}/{ws}/{PINNED}"),
            Scope::Records(ws) => format!("{ROOT}/{ws}/items"),
            Scope::Looks(ws) => format!("{LOOKED}/{ws}"),
        })
    }

    /// The key of the item `id` in this scope, where a scope has one key per item (the
    /// offset a listing after `id` starts from).
    pub(crate) fn key_of(&self, id: &ItemId) -> Option<Key> {
        match self {
            Scope::Markers(ws) => Some(Key::Marker(ws.clone(), id.clone())),
            Scope::OwnerMarkers(ws, user) => {
                Some(Key::OwnerMarker(ws.clone(), user.clone(), id.clone()))
            }
            Scope::Dismissals(ws, user) => {
                Some(Key::Dismissal(ws.clone(), user.clone(), id.clone()))
            }
            Scope::Pins(ws, user) => Some(Key::Pin(ws.clone(), user.clone(), id.clone())),
            Scope::Records(ws) => Some(Key::Record(ws.clone(), id.clone())),
            Scope::Workspace(_)
            | Scope::AllOwnerMarkers(_)
            | Scope::AllDismissals(_)
            | Scope::AllPins(_)
            | Scope::Looks(_) => None,
        }
    }

    /// Whether `key` belongs to this scope.
    pub(crate) fn contains(&self, key: &Key) -> bool {
        match (self, key) {
            (Scope::Workspace(ws), key) => ws == key.ws() && key.kind() != KeyKind::Look,
            (Scope::Markers(ws), Key::Marker(k, _)) | (Scope::Records(ws), Key::Record(k, _)) => {
                ws == k
            }
            (Scope::OwnerMarkers(ws, user), Key::OwnerMarker(k, u, _))
            | (Scope::Dismissals(ws, user), Key::Dismissal(k, u, _))
            | (Scope::Pins(ws, user), Key::Pin(k, u, _)) => ws == k && user == u,
            (Scope::AllOwnerMarkers(ws), Key::OwnerMarker(k, ..))
            | (Scope::AllDismissals(ws), Key::Dismissal(k, ..))
            | (Scope::AllPins(ws), Key::Pin(k, ..))
            | (Scope::Looks(ws), Key::Look(k, _)) => ws == k,
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
pub(crate) struct Found {
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

    /// The ids of the item keys found.
    pub(crate) fn ids(&self) -> impl Iterator<Item = &ItemId> {
        self.keys.iter().filter_map(Key::id)
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
            Key::Look(ws(), user.clone()),
        ] {
            assert_eq!(Key::parse(&key.path()), Some(key.clone()), "{key}");
        }
        assert_eq!(
            Key::Look(ws(), user.clone()).path().as_ref(),
            "looked/acme/ada"
        );
        assert_eq!(Key::Look(ws(), user.clone()).id(), None);
        for stray in [
            "ws/acme/markers",
            "ws/acme/markers/not-an-id",
            "ws/acme/items/x.txt",
            "ws/acme/dismissed/ada",
            "ws/acme/owners/ada",
            "clock/123",
            "ws/acme/markers/a/b",
            "ws/acme/other/1",
            "ws/acme/looked",
            "ws/acme/looked/ada",
            "ws/acme/looked/ada/1",
            "ws/acme/looked/Not A User",
            "looked/acme",
            "looked/acme/ada/1",
            "looked/Not A Workspace/ada",
        ] {
            assert_eq!(Key::parse(&Path::from(stray)), None, "{stray}");
        }
    }

    #[test]
    fn a_workspace_lists_under_one_prefix_and_no_other_workspace_does() {
        let id = item("k");
        let user = UserId::parse("ada").unwrap();
        let all = Scope::Workspace(ws());
        let other = Workspace::parse("acme2").unwrap();
        for key in [
            Key::Marker(ws(), id.clone()),
            Key::Record(ws(), id.clone()),
            Key::Dismissal(ws(), user.clone(), id.clone()),
            Key::OwnerMarker(ws(), user.clone(), id.clone()),
        ] {
            assert!(all.contains(&key), "{key}");
            let under = format!("{}/", all.prefix());
            assert!(key.path().as_ref().starts_with(&under), "{key}");
            let theirs = Key::Marker(other.clone(), id.clone());
            assert!(!all.contains(&theirs));
            assert!(!theirs.path().as_ref().starts_with(&under));
        }
    }

    #[test]
    fn keys_of_the_old_layout_parse_as_the_same_keys() {
        let id = item("k");
        let user = UserId::parse("ada").unwrap();
        for (old, key) in [
            (format!("markers/acme/{id}"), Key::Marker(ws(), id.clone())),
            (
                format!("items/acme/{id}.json"),
                Key::Record(ws(), id.clone()),
            ),
            (
                format!("dismissed/acme/ada/{id}"),
                Key::Dismissal(ws(), user.clone(), id.clone()),
            ),
            (
                format!("owners/acme/ada/{id}"),
                Key::OwnerMarker(ws(), user.clone(), id.clone()),
            ),
        ] {
            assert_eq!(key.legacy_path().unwrap().as_ref(), old);
            assert_eq!(
                Key::parse_legacy(&Path::from(old.as_str())),
                Some(key),
                "{old}"
            );
            assert_eq!(Key::parse(&Path::from(old.as_str())), None, "{old}");
        }
        assert_eq!(Key::parse_legacy(&Path::from("markers/acme/junk")), None);
        assert_eq!(Key::parse_legacy(&Path::from("clock/1")), None);
        // No old layout had looks: none is read from one, nor has an old name.
        assert_eq!(Key::parse_legacy(&Path::from("looked/acme/ada")), None);
        let user = UserId::parse("ada").unwrap();
        assert_eq!(Key::Look(ws(), user).legacy_path(), None);
    }

    /// A look is no part of a page: not under the prefix a reconcile lists, nor in any scope
    /// but the looks'.
    #[test]
    fn looks_list_apart_from_every_item_scope() {
        let user = UserId::parse("ada").unwrap();
        let look = Key::Look(ws(), user.clone());
        assert!(Scope::Looks(ws()).contains(&look));
        let under = format!("{}/", Scope::Workspace(ws()).prefix());
        assert!(!look.path().as_ref().starts_with(&under), "{look}");
        for scope in [
            Scope::Workspace(ws()),
            Scope::Markers(ws()),
            Scope::Records(ws()),
            Scope::OwnerMarkers(ws(), user.clone()),
            Scope::AllOwnerMarkers(ws()),
            Scope::Dismissals(ws(), user.clone()),
            Scope::AllDismissals(ws()),
            Scope::Looks(Workspace::parse("acme2").unwrap()),
        ] {
            assert!(!scope.contains(&look), "{scope}");
        }
        assert_eq!(Scope::Looks(ws()).prefix().as_ref(), "looked/acme");
        let other = Scope::Looks(Workspace::parse("acme2").unwrap());
        assert!(!look
            .path()
            .as_ref()
            .starts_with(&format!("{}/", other.prefix())));
    }

    #[test]
    fn a_listing_keeps_only_its_scopes_keys() {
        let id = item("k");
        let scope = Scope::Markers(ws());
        let mut found = Found::default();
        found.push(&scope, &Key::Marker(ws(), id.clone()).path());
        found.push(&scope, &Path::from("ws/acme/markers/junk"));
        found.push(&scope, &Key::Record(ws(), id.clone()).path());
        assert_eq!(found.keys, vec![Key::Marker(ws(), id.clone())]);
        assert_eq!(found.strays, vec!["junk".to_string(), format!("{id}.json")]);
    }
}
