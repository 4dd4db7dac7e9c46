//! The shared tables of cases (app/tests/cases/*.json): the rules that shipped JavaScript keeps
//! beside the Rust code, as inputs and the outputs both must give. This test runs them against
//! the Rust rules; app/tests/cases.test.mjs (`make test-js`, `node --test`) runs the same
//! files against public/share.js, public/drawing.js and public/pickup-element.js.

use app::contract::element::Notify;
use app::contract::page::views;
use app::contract::{Card, Filter, RecentPage, ViewPage};
use app::options::{options, Given};
use axum::response::sse::{Event, Sse};
use axum::response::IntoResponse;
use serde_json::Value;

fn table(name: &str) -> Value {
    let path = format!("{}/tests/cases/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn cases<'a>(table: &'a Value, key: &str) -> &'a [Value] {
    table[key].as_array().unwrap()
}

fn view(v: &Value) -> (Filter, u32) {
    let filter = Filter::from_wire(v["filter"].as_str().unwrap()).unwrap();
    (filter, v["cap"].as_u64().unwrap() as u32)
}

/// The views a stream opened with `query` has are the union the case gives, and each view a
/// widget wanted is served by one of them (the server sends a page for each).
#[test]
fn a_streams_views_are_what_the_server_reads_and_serve_every_widget() {
    for case in cases(&table("live"), "views") {
        let read = views(case["query"].as_str().unwrap()).unwrap();
        let union: Vec<_> = case["views"].as_array().unwrap().iter().map(view).collect();
        assert_eq!(read, union, "{}", case["why"]);
        for wanted in case["wanted"].as_array().unwrap() {
            let (filter, cap) = view(wanted);
            assert!(
                read.iter().any(|&(f, c)| f == filter && c >= cap),
                "{}: {wanted} is not served",
                case["why"]
            );
        }
    }
}

/// A shared page, as the widget of a view shows it (`RecentPage::for_view`), or not at all.
#[test]
fn a_shared_page_is_cut_to_the_widgets_view() {
    for case in cases(&table("live"), "pages") {
        let (page_view, want) = (&case["page"], &case["shown"]);
        let cards = (0..page_view["cards"].as_u64().unwrap())
            .map(|i| Card {
                id: format!("{i}_k"),
                ..Card::default()
            })
            .collect();
        let page = RecentPage {
            cards,
            more: page_view["more"].as_bool().unwrap(),
            ..RecentPage::default()
        };
        let (filter, cap) = view(&case["view"]);
        let shown = page.for_view(Some(view(page_view)), filter, cap);
        match shown {
            None => assert!(want.is_null(), "{}", case["why"]),
            Some(shown) => {
                assert_eq!(
                    shown.cards.len() as u64,
                    want["cards"].as_u64().unwrap(),
                    "{}",
                    case["why"]
                );
                assert_eq!(
                    shown.more,
                    want["more"].as_bool().unwrap(),
                    "{}",
                    case["why"]
                );
                let ids: Vec<_> = (0..shown.cards.len()).map(|i| format!("{i}_k")).collect();
                let shown_ids: Vec<_> = shown.cards.iter().map(|c| c.id.clone()).collect();
                assert_eq!(shown_ids, ids, "{}: the first cards, in order", case["why"]);
            }
        }
    }
}

/// The text of the events a case reads is what the server's writer (axum's, as sse.rs uses
/// it) sends for them: share.js's reader is checked against the server's own framing.
#[test]
fn the_events_share_js_reads_are_the_servers_words() {
    for case in cases(&table("live"), "events") {
        let text: String = case["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        let events: Vec<Event> = case["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                let data = match &e["data"] {
                    Value::String(s) => s.clone(),
                    Value::Null => "not json".to_string(),
                    // A page as the server writes it (sse.rs: `json_data` of a ViewPage).
                    page => serde_json::to_string(
                        &serde_json::from_value::<ViewPage>(page.clone()).unwrap(),
                    )
                    .unwrap(),
                };
                match e["name"].as_str() {
                    // A keep-alive, as `KeepAlive::new()` sends it (sse.rs).
                    None => Event::DEFAULT_KEEP_ALIVE,
                    Some(name) => Event::default().event(name).data(data),
                }
            })
            .collect();
        let body = Sse::new(futures::stream::iter(
            events.into_iter().map(Ok::<_, std::convert::Infallible>),
        ))
        .into_response()
        .into_body();
        let written = futures::executor::block_on(axum::body::to_bytes(body, usize::MAX)).unwrap();
        let written = String::from_utf8(written.to_vec()).unwrap();
        // A case may end in an event not ended yet: the server's text of the others comes first.
        assert!(
            text.starts_with(&written),
            "{}: {written:?} then {text:?}",
            case["why"]
        );
        let rest = &text[written.len()..];
        assert!(
            !rest.contains("\n\n"),
            "{}: {rest:?} holds an event of its own",
            case["why"]
        );
    }
}

/// The widget's cap for what a host wrote, and whether the drawing the loader asked for with it
/// is the widget's first page: the query the widget would ask (client.rs) is the loader's.
#[test]
fn a_hosts_cap_is_what_the_widget_takes_and_the_loaders_drawing_is_its_when_asked_alike() {
    for case in cases(&table("options"), "cap") {
        let given = match &case["given"] {
            Value::Null => Given::Absent,
            Value::String(s) => Given::Text(s.clone()),
            n => Given::Number(n.as_f64().unwrap()),
        };
        let widget = options(given, Given::Absent).cap;
        assert_eq!(Some(widget as u64), case["widget"].as_u64(), "{case}");
        let asks = format!("filter={}&cap={widget}", Filter::All.as_str());
        assert_eq!(case["asked"] == asks.as_str(), case["taken"], "{case}");
    }
}

#[test]
fn notify_is_on_as_the_element_says() {
    for case in cases(&table("notify"), "notify") {
        let given = match &case["given"] {
            Value::Null => Notify::Absent,
            Value::Bool(b) => Notify::Bool(*b),
            Value::String(s) => Notify::Text(s),
            _ => Notify::Other,
        };
        assert_eq!(given.is_on(), case["on"].as_bool().unwrap(), "{case}");
    }
}
