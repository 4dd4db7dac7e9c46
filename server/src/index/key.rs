//! The index's keys: every object Pickup writes is one of these, named by what it is (an item's
//! marker, its record, an owner's marker, a viewer's dismissal or look). Where each lives in
//! the store (its path) is the store's business (`store/key.rs`).
//!
//! Most keys name an item ([`Key::id`]); a viewer's last look at a workspace ([`Key::Look`])
//! names none.

use crate::index::{ItemId, UserId, Workspace};

/// One key Pickup writes. Every part was validated before it got here. Keys of one scope
/// order as their paths list (newest item first).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// `ws/{ws}/markers/{id}`: the item is listed.
    Marker(Workspace, ItemId),
    /// `ws/{ws}/items/{id}.json`: the item's record.
    Record(Workspace, ItemId),
    /// `ws/{ws}/dismissed/{user}/{id}`: this viewer dismissed the item.
    Dismissal(Workspace, UserId, ItemId),
    /// `ws/{ws}/owners/{user}/{id}`: the item is listed among its owner's (the "Mine" filter).
    OwnerMarker(Workspace, UserId, ItemId),
    /// `ws/{ws}/pinned/{user}/{id}`: this viewer keeps the item at the top of their list.
    Pin(Workspace, UserId, ItemId),
    /// `looked/{ws}/{user}`: this viewer's last look at the workspace (a small JSON body,
    /// `{"at": "…"}`, written by that viewer only). Not an item's key, and not under `ws/{ws}/`:
    /// no page is made of it.
    Look(Workspace, UserId),
}

impl Key {
    pub fn ws(&self) -> &Workspace {
        match self {
            Key::Marker(ws, _)
            | Key::Record(ws, _)
            | Key::Dismissal(ws, _, _)
            | Key::OwnerMarker(ws, _, _)
            | Key::Pin(ws, _, _)
            | Key::Look(ws, _) => ws,
        }
    }

    /// The item the key is of; `None` for a key of no item (a viewer's look).
    pub fn id(&self) -> Option<&ItemId> {
        match self {
            Key::Marker(_, id)
            | Key::Record(_, id)
            | Key::Dismissal(_, _, id)
            | Key::OwnerMarker(_, _, id)
            | Key::Pin(_, _, id) => Some(id),
            Key::Look(..) => None,
        }
    }

    /// What kind of key it is, for counts in logs and reports.
    pub fn kind(&self) -> KeyKind {
        match self {
            Key::Marker(..) => KeyKind::Marker,
            Key::Record(..) => KeyKind::Record,
            Key::Dismissal(..) => KeyKind::Dismissal,
            Key::OwnerMarker(..) => KeyKind::OwnerMarker,
            Key::Pin(..) => KeyKind::Pin,
            Key::Look(..) => KeyKind::Look,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyKind {
    Marker,
    Record,
    Dismissal,
    OwnerMarker,
    Pin,
    Look,
}

impl KeyKind {
    /// Its name as a metric label.
    pub fn label(self) -> &'static str {
        match self {
            KeyKind::Marker => "marker",
            KeyKind::Record => "record",
            KeyKind::Dismissal => "dismissal",
            KeyKind::OwnerMarker => "owner_marker",
            KeyKind::Pin => "pin",
            KeyKind::Look => "look",
        }
    }

    pub fn plural(self) -> &'static str {
        match self {
            KeyKind::Marker => "markers",
            KeyKind::Record => "records",
            KeyKind::Dismissal => "dismissals",
            KeyKind::OwnerMarker => "owner markers",
            KeyKind::Pin => "pins",
            KeyKind::Look => "looks",
        }
    }
}
