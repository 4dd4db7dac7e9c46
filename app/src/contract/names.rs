//! Every name both sides of the wire spell: the routes, the live stream's event names, the
//! element's DOM events, header names, and the keys the widget reads from the page (the home
//! page's fragment, this tab's storage, the loader's `data-pickup-*` attributes). The server,
//! the widget and the producer client use these constants; `public/contract.js` is generated
//! from them for the loaders (`app/tests/contract_js.rs`).
//!
//! The widget's server functions (`/api/recent`, `/api/dismiss`) are not here: their URLs are
//! their declarations' (`api.rs`, `<Recent as ServerFn>::PATH`).

/// The REST API's routes, `{ws}` and `{id}` standing for a workspace and an item id.
pub mod route {
    pub const OPENAPI: &str = "/api/v1/openapi.json";
    pub const ITEMS: &str = "/api/v1/workspaces/{ws}/items";
    pub const ITEM: &str = "/api/v1/workspaces/{ws}/items/{id}";
    pub const DISMISS: &str = "/api/v1/workspaces/{ws}/items/{id}/dismiss";
    /// The viewer's last look at the workspace (`GET`, `PUT`).
    pub const LOOKED: &str = "/api/v1/workspaces/{ws}/looked";
    /// The viewer's pins (`GET`), and one pin (`PUT` pins it, `DELETE` unpins it).
    pub const PINS: &str = "/api/v1/workspaces/{ws}/pins";
    pub const PIN: &str = "/api/v1/workspaces/{ws}/pins/{id}";
    pub const RECENT: &str = "/api/v1/workspaces/{ws}/recent";
    pub const LIVE: &str = "/api/v1/workspaces/{ws}/live";
    /// The first page drawn by the server, for a loader to show before the wasm has arrived.
    pub const DRAWING: &str = "/api/v1/workspaces/{ws}/drawing";
    /// The process answers (liveness, no token).
    pub const HEALTHZ: &str = "/healthz";
    /// The store answers (readiness, no token): 503 as text when not.
    pub const READYZ: &str = "/readyz";

    /// `route` with its `{ws}` (and `{id}`, when given) filled in. Workspace names and ids are
    /// of URL-safe characters only (`names.rs`, `id.rs` on the server), so nothing is escaped.
    pub fn fill(route: &str, ws: &str, id: Option<&str>) -> String {
        let path = route.replace("{ws}", ws);
        match id {
            Some(id) => path.replace("{id}", id),
            None => path,
        }
    }
}

/// The events of `GET …/live` (server-sent events), each with a JSON `data`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveEvent {
    /// A page of cards (with `filter` and `cap` beside them on a stream of several `views`).
    Page,
    /// The store did not answer: the last page stands, the stream retries (an `ApiError`).
    Unavailable,
    /// The token expired or no longer holds: the stream ends (an `ApiError`).
    Unauthenticated,
    /// The server is shutting down or moved the stream: open it again (`{}`).
    Reconnect,
}

impl LiveEvent {
    pub const ALL: [LiveEvent; 4] = [
        LiveEvent::Page,
        LiveEvent::Unavailable,
        LiveEvent::Unauthenticated,
        LiveEvent::Reconnect,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LiveEvent::Page => "page",
            LiveEvent::Unavailable => "unavailable",
            LiveEvent::Unauthenticated => "unauthenticated",
            LiveEvent::Reconnect => "reconnect",
        }
    }

    pub fn from_wire(name: &[u8]) -> Option<LiveEvent> {
        LiveEvent::ALL
            .into_iter()
            .find(|e| e.as_str().as_bytes() == name)
    }
}

/// The DOM events the widget dispatches on its host element: bubbling, composed, named
/// `pickup:` and the event's word (`pickup:open`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DomEvent {
    /// The viewer opens a card's link; cancelable (`{id, key, url}`).
    Open,
    /// The viewer dismisses a card (`{id}`).
    Dismiss,
    /// A fetch, dismissal or token renewal failed (`{code, message}`).
    Error,
    /// One of the viewer's own items reached a final status (the card); once per element
    /// and item.
    Finished,
}

impl DomEvent {
    pub const ALL: [DomEvent; 4] = [
        DomEvent::Open,
        DomEvent::Dismiss,
        DomEvent::Error,
        DomEvent::Finished,
    ];

    /// The event's type, as `addEventListener` takes it.
    pub fn name(self) -> &'static str {
        match self {
            DomEvent::Open => "pickup:open",
            DomEvent::Dismiss => "pickup:dismiss",
            DomEvent::Error => "pickup:error",
            DomEvent::Finished => "pickup:finished",
        }
    }
}

/// The header on a write's answer that says how many seconds are left before the server's TTL
/// deletes this run by its name, heartbeats or not: a producer renews before then.
pub const EXPIRES_IN: &str = "pickup-expires-in";

/// The headers on a `/recent` answer that say whom the server took the token for (its user
/// id) and when the token expires (its `exp`, seconds since the epoch): the tabs of a browser
/// share a live stream between the same viewer's tokens (public/share.js), each tab's share
/// ending at its own token's expiry, as the server ends a stream. The server verified both;
/// a script need not decode the token.
pub const VIEWER: &str = "pickup-viewer";
pub const TOKEN_EXPIRES: &str = "pickup-token-expires";

/// The headers of a call of the widget's server functions (`client.rs`), besides its
/// `Authorization`.
pub const CALL_HEADERS: [(&str, &str); 2] = [
    ("Content-Type", "application/json"),
    ("Accept", "application/json"),
];

/// The home page's fragment (`#ws=…&token=…&cap=…&refresh=…`): never sent to a server.
pub mod fragment {
    pub const WORKSPACE: &str = "ws";
    pub const TOKEN: &str = "token";
    pub const CAP: &str = "cap";
    pub const REFRESH: &str = "refresh";
}

/// This tab's sessionStorage, where the home page keeps what its fragment gave; and the
/// browser's localStorage, where the bell is kept.
pub mod storage {
    pub const WORKSPACE: &str = "pickup.ws";
    pub const TOKEN: &str = "pickup.token";
    /// In localStorage: "on" while this browser's bell is on (public/share.js).
    pub const BELL: &str = "pickup.notify";
}

/// The attributes a loader reads on the element the widget mounts into (`<div data-pickup-…>`).
pub mod attribute {
    pub const WORKSPACE: &str = "data-pickup-workspace";
    pub const TOKEN: &str = "data-pickup-token";
    pub const SERVER: &str = "data-pickup-server";
    pub const CAP: &str = "data-pickup-cap";
    pub const REFRESH: &str = "data-pickup-refresh";
    pub const FILTER: &str = "data-pickup-filter";
    pub const LOCALE: &str = "data-pickup-locale";
    pub const LABELS: &str = "data-pickup-labels";
    /// Present (and not "false"): the widget shows its bell.
    pub const NOTIFY: &str = "data-pickup-notify";
    /// An item's id the widget leaves out.
    pub const EXCLUDE: &str = "data-pickup-exclude";
    /// The home page's element: its workspace and token come from the fragment or storage.
    pub const HOME: &str = "data-pickup-home";
    /// On the drawing of a first page a loader made before the wasm arrived.
    pub const DRAWN: &str = "data-pickup-drawn";
}

/// The global (`Symbol.for(SHARE)`) under which the first loaded bundle installs the browser's
/// shared live stream (`share.js`), which the widget's stream goes through.
pub const SHARE: &str = "pickup:share";
