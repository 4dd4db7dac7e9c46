//! The wire contract for JavaScript: `public/contract.js` is written from the contract
//! (`app/src/contract/`), the widget's option rule (`options.rs`) and the server functions'
//! declarations (`api.rs`), and this test fails when the file in the tree is not what they
//! make, so a drift fails `cargo test`, not only a browser run. The loaders (`prefetch.js`,
//! whose request must be byte-identical to the widget's, `early.js`, `share.js`, the element)
//! import it; scripts/site.mjs bundles it into each.
//!
//! After changing the model: `PICKUP_WRITE_CONTRACT=1 cargo test -p app --test contract_js`.

use app::api::{Dismiss, Recent};
use app::contract::element::ATTRIBUTES;
use app::contract::names::{attribute, fragment, route, storage, SHARE};
use app::contract::{
    Card, DomEvent, Filter, LiveEvent, Owner, RecentPage, Status, DEFAULT_CAP, MAX_CAP, MIN_CAP,
    TOKEN_EXPIRES, VIEWER,
};
use app::options::NONSENSE_ABOVE;
use app::relative::{DATE_WORDS, TIME_WORDS};
use leptos::server_fn::ServerFn;
use serde_json::Value;
use std::fmt::Write;

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../public/contract.js");

/// A value that stands for an argument in a serialised body: it must occur once, so the
/// generated template puts the caller's value exactly where serde put this one.
const WS_HOLE: &str = "\u{1}ws\u{1}";
const CAP_HOLE: u32 = 4_242_424_242;

/// Each field of `full` (every optional field set) and its JSON type; `?` when `bare` (every
/// optional field unset) has it null, which the reader takes as absent too (serde's `Option`).
fn fields(full: &impl serde::Serialize, bare: &impl serde::Serialize) -> String {
    let full = serde_json::to_value(full).unwrap();
    let bare = serde_json::to_value(bare).unwrap();
    let mut out = String::from("{ ");
    for (name, value) in full.as_object().unwrap() {
        let kind = match value {
            Value::String(_) => "string",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
            Value::Null => panic!("{name}: set every optional field of the full sample"),
        };
        let optional = bare[name].is_null();
        write!(
            out,
            "{name}: \"{kind}{}\", ",
            if optional { "?" } else { "" }
        )
        .unwrap();
    }
    out.truncate(out.len() - 2);
    out + " }"
}

fn owner() -> Owner {
    Owner {
        sub: "s".into(),
        name: "n".into(),
    }
}

fn card(optional: bool) -> Card {
    Card {
        id: "i".into(),
        key: "k".into(),
        title: "t".into(),
        url: optional.then(|| "/u".into()),
        status: Status::Running,
        stalled: false,
        stalled_at: None,
        progress: optional.then_some(0.5),
        owner: owner(),
        created_at: "c".into(),
        updated_at: "u".into(),
        finished_at: optional.then(|| "f".into()),
    }
}

fn page(optional: bool) -> RecentPage {
    RecentPage {
        cards: vec![card(optional)],
        more: false,
        partial: false,
        generated_at: "g".into(),
    }
}

/// The first page's request body as serde writes `api::Recent` (its fields in declaration
/// order), as a JavaScript template with the caller's workspace, cap and filter in its holes.
fn first_page_body() -> String {
    let body = serde_json::to_string(&Recent {
        ws: WS_HOLE.into(),
        filter: Filter::Mine,
        cap: Some(CAP_HOLE),
        before: None,
    })
    .unwrap();
    let holes = [
        (
            serde_json::to_string(WS_HOLE).unwrap(),
            "${JSON.stringify(ws)}",
        ),
        (CAP_HOLE.to_string(), "${cap}"),
        (
            serde_json::to_string(&Filter::Mine).unwrap(),
            "${JSON.stringify(filter)}",
        ),
    ];
    for (hole, _) in &holes {
        assert_eq!(body.matches(hole.as_str()).count(), 1, "{body}");
    }
    // The literal parts, as a template literal's text: a backslash, a backtick or `${` of
    // their own must stay text.
    let literal = |text: &str| {
        text.replace('\\', "\\\\")
            .replace('`', "\\`")
            .replace("${", "\\${")
    };
    // Split at each hole in turn; the literal parts are escaped once, at the end.
    let mut parts: Vec<Result<String, &str>> = vec![Ok(body)];
    for (hole, js) in &holes {
        parts = parts
            .into_iter()
            .flat_map(|part| match part {
                Ok(text) => {
                    let mut out = Vec::new();
                    for (i, piece) in text.split(hole.as_str()).enumerate() {
                        if i > 0 {
                            out.push(Err(*js));
                        }
                        out.push(Ok(piece.to_string()));
                    }
                    out
                }
                hole => vec![hole],
            })
            .collect();
    }
    let template: String = parts
        .into_iter()
        .map(|part| part.map_or_else(str::to_string, |text| literal(&text)))
        .collect();
    format!("`{template}`")
}

/// `{ key: "value", … }`, in the order given.
fn object(pairs: &[(&str, &str)]) -> String {
    let fields: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}: {v:?}")).collect();
    format!("{{ {} }}", fields.join(", "))
}

/// A route as a function of its workspace (escaped as a URL's path segment).
fn route_fn(route: &str) -> String {
    let (head, tail) = route.split_once("{ws}").expect("a route of a workspace");
    format!("(ws) => `{head}${{encodeURIComponent(ws)}}{tail}`")
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
        r#"/** The live stream's, the recent page's and its drawing's routes (names.rs), of a
 *  workspace; a live stream's path, its workspace captured. */
export const livePath = {live};
export const recentPath = {recent};
export const drawingPath = {drawing};
export const LIVE_PATTERN = /^{live_pattern}$/;

/** The live stream's event names (names.rs, LiveEvent). */
export const LIVE_EVENT = {live_events};

/** The DOM events the widget dispatches on its host (names.rs, DomEvent). */
export const DOM_EVENT = {dom_events};

/** The home page's fragment keys and this tab's sessionStorage keys (names.rs). */
export const FRAGMENT = {fragment};
export const STORAGE = {storage};

/** The attributes a loader reads on a widget's element (names.rs). */
export const ATTRIBUTE = {attribute};

/** <pickup-recent>'s attributes, in mount()'s order (element.rs). */
export const ELEMENT_ATTRIBUTES = {attributes:?};

/** The global symbol's key under which the shared live stream is installed (names.rs). */
export const SHARE = {SHARE:?};

/** The headers of a `recent` answer that say whom the server took the token for, and when the
 *  token expires (names.rs). */
export const HEADER = {header};

/** How a card words its times (relative.rs): `Intl.RelativeTimeFormat`'s options for "3 min.
 *  ago", `Intl.DateTimeFormat`'s for the date and time it stands for. */
export const TIME_WORDS = {time_words};
export const DATE_WORDS = {date_words};
"#,
        header = object(&[("viewer", VIEWER), ("tokenExpires", TOKEN_EXPIRES)]),
        time_words = object(&TIME_WORDS),
        date_words = object(&DATE_WORDS),
        live = route_fn(route::LIVE),
        live_pattern = route::LIVE.replace('/', "\\/").replace("{ws}", "([^/]+)"),
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
        storage = object(&[("workspace", storage::WORKSPACE), ("token", storage::TOKEN)]),
        attribute = object(&[
            ("workspace", attribute::WORKSPACE),
            ("token", attribute::TOKEN),
            ("server", attribute::SERVER),
            ("cap", attribute::CAP),
            ("refresh", attribute::REFRESH),
            ("filter", attribute::FILTER),
            ("locale", attribute::LOCALE),
            ("labels", attribute::LABELS),
            ("home", attribute::HOME),
            ("drawn", attribute::DRAWN),
        ]),
    )
}

fn contract() -> String {
    let statuses: Vec<&str> = Status::ALL.iter().map(|s| s.as_str()).collect();
    let filters = [Filter::All, Filter::Mine]
        .map(|f| format!("{0}: \"{0}\"", f.as_str()))
        .join(", ");
    let nonsense = format!("{NONSENSE_ABOVE:e}");
    format!(
        r#"// GENERATED by app/tests/contract_js.rs from app/src/contract/, options.rs and api.rs: do
// not edit. `PICKUP_WRITE_CONTRACT=1 cargo test -p app --test contract_js` writes it again;
// `cargo test` fails while it differs from what the Rust model makes.

/** The server functions' URLs (api.rs), under the widget's server. */
export const RECENT_PATH = {recent:?};
export const DISMISS_PATH = {dismiss:?};

/** The cap rule (cap.rs, options.rs): a number from 0 to NONSENSE_ABOVE is rounded and
 *  clamped into MIN_CAP..MAX_CAP; anything else is DEFAULT_CAP. */
export const DEFAULT_CAP = {DEFAULT_CAP};
export const MIN_CAP = {MIN_CAP};
export const MAX_CAP = {MAX_CAP};
export const NONSENSE_ABOVE = {nonsense};

/** Filter's wire names (page.rs). */
export const FILTER = {{ {filters} }};

/** The statuses a producer may send (Status::ALL); any other is "unknown". */
export const STATUSES = {statuses:?};

/** The fields of a page, a card and its owner, with their JSON types; "?": may be null or
 *  missing (an Option). The widget reads a page whole or not at all (decode.rs). */
export const PAGE_FIELDS = {page};
export const CARD_FIELDS = {card};
export const OWNER_FIELDS = {owner};

/** The body of a widget's first `recent` call, byte for byte as the widget sends it and serde
 *  writes api::Recent: no cursor. */
export const firstPageBody = (ws, cap, filter = "all") => {body};

{names}"#,
        recent = <Recent as ServerFn>::PATH,
        dismiss = <Dismiss as ServerFn>::PATH,
        page = fields(&page(true), &page(false)),
        card = fields(&card(true), &card(false)),
        owner = fields(&owner(), &owner()),
        body = first_page_body(),
        names = names(),
    )
}

#[test]
fn public_contract_js_is_what_the_rust_model_makes() {
    let want = contract();
    if std::env::var_os("PICKUP_WRITE_CONTRACT").is_some() {
        std::fs::write(PATH, &want).unwrap();
    }
    let have = std::fs::read_to_string(PATH).unwrap_or_default();
    assert!(
        have == want,
        "public/contract.js is not what the Rust model makes: run \
         `PICKUP_WRITE_CONTRACT=1 cargo test -p app --test contract_js`\n--- want ---\n{want}"
    );
}

#[test]
fn the_first_page_body_is_what_the_server_reads() {
    // What the template makes for a workspace "acme" and cap 8, written out as JavaScript's
    // JSON.stringify would fill it, read back as the server function's arguments.
    let body = first_page_body();
    let filled = body
        .trim_matches('`')
        .replace("${JSON.stringify(ws)}", "\"acme\"")
        .replace("${cap}", "8")
        .replace("${JSON.stringify(filter)}", "\"mine\"");
    let args: Recent = serde_json::from_str(&filled).unwrap();
    assert_eq!(args.ws, "acme");
    assert_eq!(args.filter, Filter::Mine);
    assert_eq!(args.cap, Some(DEFAULT_CAP));
    assert_eq!(args.before, None);
}
