//! The wire contract for JavaScript and Python: `public/contract.js` and `public/contract.json`
//! are written from the contract (`app/src/contract/`) and the server functions' declarations
//! (`api.rs`), and this test fails when a file in the tree is not what they make, so a drift
//! fails `cargo test`, not only a browser run. The loaders (`drawing.js`, `early.js`, `share.js`,
//! the element) import contract.js, and scripts/site.mjs bundles it into each; end2end's specs,
//! benches and engines' smoke run import it too; scripts/contract.py reads contract.json.
//!
//! After changing the model: `PICKUP_WRITE_CONTRACT=1 cargo test -p app --test contract_js`.

use app::api::{Dismiss, Look, Looked, Pin, Recent};
use app::contract::element::ATTRIBUTES;
use app::contract::names::{attribute, fragment, route, storage, SHARE};
use app::contract::{DomEvent, Filter, LiveEvent, DEFAULT_CAP, VIEWER};
use app::relative::{DATE_WORDS, TIME_WORDS};
use leptos::server_fn::ServerFn;
use serde_json::json;

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../public/contract.js");
/// The same names for the Python scripts (scripts/contract.py reads it).
const JSON_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../public/contract.json");

/// `{ key: "value", … }`, in the order given.
fn object(pairs: &[(&str, &str)]) -> String {
    let key = |k: &str| match k.chars().all(|c| c.is_ascii_alphanumeric()) {
        true => k.to_string(),
        false => format!("{k:?}"),
    };
    let fields: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}: {v:?}", key(k)))
        .collect();
    format!("{{ {} }}", fields.join(", "))
}

/// A route as a function of its workspace (and item id), each escaped as a URL's path segment.
fn route_fn(route: &str) -> String {
    let (head, tail) = route.split_once("{ws}").expect("a route of a workspace");
    match tail.split_once("{id}") {
        None => format!("(ws) => `{head}${{encodeURIComponent(ws)}}{tail}`"),
        Some((middle, tail)) => format!(
            "(ws, id) => `{head}${{encodeURIComponent(ws)}}{middle}${{encodeURIComponent(id)}}{tail}`"
        ),
    }
}

/// The server functions' paths (api.rs), by name.
fn server_fns() -> [(&'static str, &'static str); 5] {
    [
        ("recent", <Recent as ServerFn>::PATH),
        ("dismiss", <Dismiss as ServerFn>::PATH),
        ("pin", <Pin as ServerFn>::PATH),
        ("looked", <Looked as ServerFn>::PATH),
        ("look", <Look as ServerFn>::PATH),
    ]
}

/// What the Python scripts name: the routes and server functions they call, the live stream's
/// page event.
fn contract_json() -> String {
    let path = |name: &str| {
        server_fns()
            .into_iter()
            .find(|(n, _)| *n == name)
            .unwrap()
            .1
    };
    let value = json!({
        "generated": "by app/tests/contract_js.rs from app/src/contract/ and api.rs: do not edit",
        "routes": {
            "items": route::ITEMS,
            "item": route::ITEM,
            "recent": route::RECENT,
            "pin": route::PIN,
            "live": route::LIVE,
            "healthz": route::HEALTHZ,
            "readyz": route::READYZ,
        },
        "server_fns": { "looked": path("looked"), "look": path("look") },
        "live_events": { "page": LiveEvent::Page.as_str() },
    });
    serde_json::to_string_pretty(&value).unwrap() + "\n"
}

fn names() -> String {
    let live_events: Vec<(&str, &str)> = LiveEvent::ALL
        .iter()
        .map(|e| (e.as_str(), e.as_str()))
        .collect();
    let dom_events: Vec<(&str, &str)> = DomEvent::ALL
        .iter()
        .map(|e| (e.name().trim_start_matches("pickup:"), e.name()))
        .collect();
    let attributes: Vec<&str> = ATTRIBUTES.iter().map(|a| a.name).collect();
    format!(
        r#"/** The REST API's routes (names.rs), of a workspace and an item. */
export const itemsPath = {items};
export const itemPath = {item};
export const livePath = {live};
export const recentPath = {recent};
export const drawingPath = {drawing};

/** The live stream's event names (names.rs, LiveEvent). */
export const LIVE_EVENT = {live_events};

/** The DOM events the widget dispatches on its host (names.rs, DomEvent). */
export const DOM_EVENT = {dom_events};

/** The home page's fragment keys, this tab's sessionStorage keys and the bell's localStorage
 *  key (names.rs). */
export const FRAGMENT = {fragment};
export const STORAGE = {storage};

/** The attributes a loader reads on a widget's element (names.rs). */
export const ATTRIBUTE = {attribute};

/** <pickup-recent>'s attributes, in mount()'s order (element.rs). */
export const ELEMENT_ATTRIBUTES = {attributes:?};

/** The global symbol's key under which the shared live stream is installed (names.rs). */
export const SHARE = {SHARE:?};

/** The header of a `recent` answer that says whom the server took the token for (names.rs). */
export const HEADER = {header};

/** How a card words its times (relative.rs): `Intl.RelativeTimeFormat`'s options for "3 min.
 *  ago", `Intl.DateTimeFormat`'s for the date and time it stands for. */
export const TIME_WORDS = {time_words};
export const DATE_WORDS = {date_words};
"#,
        header = object(&[("viewer", VIEWER)]),
        time_words = object(&TIME_WORDS),
        date_words = object(&DATE_WORDS),
        items = route_fn(route::ITEMS),
        item = route_fn(route::ITEM),
        live = route_fn(route::LIVE),
        recent = route_fn(route::RECENT),
        drawing = route_fn(route::DRAWING),
        live_events = object(&live_events),
        dom_events = object(&dom_events),
        fragment = object(&[
            ("workspace", fragment::WORKSPACE),
            ("token", fragment::TOKEN),
            ("cap", fragment::CAP),
            ("refresh", fragment::REFRESH),
        ]),
        storage = object(&[
            ("workspace", storage::WORKSPACE),
            ("token", storage::TOKEN),
            ("bell", storage::BELL),
        ]),
        attribute = object(&[
            ("workspace", attribute::WORKSPACE),
            ("token", attribute::TOKEN),
            ("server", attribute::SERVER),
            ("cap", attribute::CAP),
            ("refresh", attribute::REFRESH),
            ("filter", attribute::FILTER),
            ("locale", attribute::LOCALE),
            ("labels", attribute::LABELS),
            ("exclude", attribute::EXCLUDE),
            ("home", attribute::HOME),
            ("drawn", attribute::DRAWN),
        ]),
    )
}

fn contract() -> String {
    let filters = Filter::ALL
        .map(|f| format!("{0}: \"{0}\"", f.as_str()))
        .join(", ");
    format!(
        r#"// GENERATED by app/tests/contract_js.rs from app/src/contract/ and api.rs: do not edit.
// `PICKUP_WRITE_CONTRACT=1 cargo test -p app --test contract_js` writes it again; `cargo test`
// fails while it differs from what the Rust model makes.

/** The server functions' URLs (api.rs), under the widget's server. */
export const SERVER_FN = {server_fns};

/** A page's number of cards when the host gives none (cap.rs). */
export const DEFAULT_CAP = {DEFAULT_CAP};

/** Filter's wire names (page.rs). */
export const FILTER = {{ {filters} }};

{names}"#,
        server_fns = object(&server_fns()),
        names = names(),
    )
}

#[test]
fn public_contract_js_is_what_the_rust_model_makes() {
    for (path, want) in [(PATH, contract()), (JSON_PATH, contract_json())] {
        if std::env::var_os("PICKUP_WRITE_CONTRACT").is_some() {
            std::fs::write(path, &want).unwrap();
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            have == want,
            "{path} is not what the Rust model makes: run \
             `PICKUP_WRITE_CONTRACT=1 cargo test -p app --test contract_js`\n--- want ---\n{want}"
        );
    }
}

/// Issue 46.2: shipped JavaScript keeps only what must run before or outside the wasm, in at
/// most this many hand-written lines (public/*.js, the generated contract.js left out).
const MAX_HAND_WRITTEN_JS_LINES: usize = 700;

#[test]
fn shipped_javascript_is_at_most_700_hand_written_lines() {
    let public = concat!(env!("CARGO_MANIFEST_DIR"), "/../public");
    let mut counted = Vec::new();
    for entry in std::fs::read_dir(public).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "js") {
            let text = std::fs::read_to_string(&path).unwrap();
            if !text.starts_with("// GENERATED") {
                counted.push((path.file_name().unwrap().to_owned(), text.lines().count()));
            }
        }
    }
    let total: usize = counted.iter().map(|(_, n)| n).sum();
    assert!(
        total <= MAX_HAND_WRITTEN_JS_LINES,
        "{total} hand-written lines of shipped JavaScript, over {MAX_HAND_WRITTEN_JS_LINES}: {counted:?}"
    );
}
