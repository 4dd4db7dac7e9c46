//! Live streams over real HTTP: the app served in this process (two of them on one store where
//! a second server is the point), a file store, server-sent events read as a browser's `fetch`
//! reads them.

use crate::common::client::path;
use crate::common::client::TestClient;
use crate::common::in_process::Served;
use crate::common::stream::{token, Events, PATIENCE};
use app::contract::LiveEvent;
use serde_json::json;
use std::time::Duration;

/// With a period of an hour, only the writes through this server can explain each page: a
/// new item, its update, a dismissal by this viewer from elsewhere, and a removal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_delivers_each_change_as_it_happens() {
    let s = Served::start(&["--live-every", "1h"]);
    let c = s.client();
    let writer = token("ada", "acme", true, "1h");
    let viewer = token("bob", "acme", false, "1h");
    let mut events = Events::open(&s.url, "acme", &viewer).await;
    assert_eq!(events.page().await, vec![], "the first page, at once");

    let a = c.register(&writer, "acme", "a").await.id;
    assert_eq!(events.page().await, vec![(a.clone(), "running".into())]);

    let body = json!({"title": "item a", "status": "succeeded", "progress": 1.0});
    let res = c.update(&writer, "acme", &a, &body).await;
    assert_eq!(res.status, 200);
    assert_eq!(events.page().await, vec![(a.clone(), "succeeded".into())]);

    let b = c.register(&writer, "acme", "b").await.id;
    assert_eq!(events.page().await.len(), 2);
    // The viewer dismisses b from another tab: this stream drops it.
    let res = c
        .post(&path::dismiss("acme", &b))
        .bearer(&viewer)
        .send()
        .await;
    assert_eq!(res.status, 204);
    assert_eq!(events.page().await, vec![(a.clone(), "succeeded".into())]);

    let res = c.remove(&writer, "acme", &a).await;
    assert_eq!(res.status, 204);
    assert_eq!(events.page().await, vec![]);
}

/// Two servers on one store: an item registered through A reaches a viewer of B within B's
/// period, with nothing but B's watcher to carry it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_item_registered_on_one_server_reaches_a_viewer_of_another() {
    let a = Served::start(&["--live-every", "1h"]);
    let b = Served::start_on(&a.store_url(), &["--live-every", "200ms"]);
    let mut events = Events::open(&b.url, "acme", &token("bob", "acme", false, "1h")).await;
    assert_eq!(events.page().await, vec![]);
    let ada = token("ada", "acme", true, "1h");
    let id = TestClient::url(&a.url).register(&ada, "acme", "k").await.id;
    assert_eq!(events.page().await, vec![(id, "running".into())]);
}

/// A token that expires ends its stream with an `unauthenticated` event, and nothing after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expiring_token_ends_its_stream() {
    let s = Served::start(&[]);
    let mut events = Events::open(&s.url, "acme", &token("bob", "acme", false, "2s")).await;
    assert_eq!(events.page().await, vec![]);
    let (event, data) = events.next().await.expect("a closing event");
    assert_eq!(event, LiveEvent::Unauthenticated.as_str(), "{data}");
    assert_eq!(data["error"], "unauthenticated");
    assert_eq!(events.next().await, None, "the stream ends");
}

/// A stranger's subscription is refused before any stream: 403 and a JSON error, nothing else;
/// no token, 401.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_member_gets_403_and_nothing_else() {
    let s = Served::start(&[]);
    let eve = token("eve", "other", false, "1h");
    let Err(res) = Events::subscribe(&s.url, "acme", Some(&eve), "").await else {
        panic!("a stream for a stranger");
    };
    assert_eq!(res.status, 403);
    assert!(res
        .header("content-type")
        .unwrap()
        .starts_with("application/json"));
    assert_eq!(res.error(), "forbidden");
    let Err(res) = Events::subscribe(&s.url, "acme", None, "").await else {
        panic!("a stream for no token");
    };
    assert_eq!(res.status, 401);
}

/// A shutdown (SIGTERM) ends every stream with `reconnect` (so clients go to another server),
/// and the server stops without waiting out its shutdown grace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_ends_streams_with_reconnect() {
    let mut s = Served::start(&["--shutdown-grace", "60s"]);
    let mut events = Events::open(&s.url, "acme", &token("bob", "acme", false, "1h")).await;
    assert_eq!(events.page().await, vec![]);
    tokio::time::timeout(Duration::from_secs(30), s.stop())
        .await
        .expect("stops well before its 60 s grace");
    let (event, _) = events.next().await.expect("a closing event");
    assert_eq!(event, LiveEvent::Reconnect.as_str());
    assert_eq!(events.next().await, None);
}

/// Streams hold a connection each for as long as they last: beyond `PICKUP_MAX_STREAMS` a
/// subscription is refused with 503 `busy` (the widget polls), and a closed stream frees its
/// place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_beyond_the_limit_are_refused_and_a_closed_one_frees_its_place() {
    let s = Served::start(&["--max-streams", "1"]);
    let viewer = token("bob", "acme", false, "1h");
    let mut first = Events::open(&s.url, "acme", &viewer).await;
    assert_eq!(first.page().await, vec![]);
    let Err(res) = Events::subscribe(&s.url, "acme", Some(&viewer), "").await else {
        panic!("a second stream past the limit of one");
    };
    assert_eq!(res.status, 503);
    assert_eq!(res.error(), "busy");
    drop(first);
    // The server notices the closed connection when it next writes to it (a keep-alive or a
    // page); a write through it makes that happen now.
    let ada = token("ada", "acme", true, "1h");
    s.client().register(&ada, "acme", "k").await;
    let opened = tokio::time::timeout(PATIENCE, async {
        while Events::subscribe(&s.url, "acme", Some(&viewer), "")
            .await
            .is_err()
        {
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert!(opened.is_ok(), "the closed stream's place was never freed");
}

/// A stream is one stream against the limits, however many views it carries: a viewer's
/// share of 2 holds two streams of two views each (each view was counted before, so the second
/// stream was refused), and no third.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_of_several_views_counts_once() {
    let s = Served::start(&["--max-streams-per-viewer", "2"]);
    let bob = token("bob", "acme", false, "1h");
    let views = "views=all:5,mine:5";
    let mut open = Vec::new();
    for n in 1..=2 {
        let res = Events::subscribe(&s.url, "acme", Some(&bob), views).await;
        open.push(res.unwrap_or_else(|e| panic!("stream {n} of two views: {e:?}")));
    }
    let res = Events::subscribe(&s.url, "acme", Some(&bob), views).await;
    assert_eq!(
        res.err().map(|e| e.status),
        Some(axum::http::StatusCode::SERVICE_UNAVAILABLE),
        "a third stream is past the viewer's share"
    );
    drop(open);
}

/// Streams are shared fairly: one member's streams stop at the viewer's share, one
/// workspace's at the workspace's, and members of other workspaces (or other members) still
/// get theirs. Server 20, workspace 10, viewer 4 here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_member_or_one_workspace_cannot_take_every_stream() {
    let s = Served::start(&[
        "--max-streams",
        "20",
        "--max-streams-per-workspace",
        "10",
        "--max-streams-per-viewer",
        "4",
    ]);
    let status = |ws: &'static str, token: String| {
        let url = s.url.clone();
        async move {
            match Events::subscribe(&url, ws, Some(&token), "").await {
                Ok(events) => (200, Ok(events)),
                Err(refused) => (refused.status.as_u16(), Err(refused)),
            }
        }
    };
    let mut open = Vec::new();
    let greedy = token("mallory", "acme,beta", false, "1h");
    for _ in 0..4 {
        let (code, res) = status("acme", greedy.clone()).await;
        assert_eq!(code, 200);
        open.push(res);
    }
    let (code, res) = status("acme", greedy.clone()).await;
    assert_eq!(code, 503, "the viewer's share is taken");
    assert_eq!(res.err().unwrap().error(), "busy");
    // Other members of the workspace fill it to its share...
    for sub in ["bob", "carol"] {
        for _ in 0..3 {
            let (code, res) = status("acme", token(sub, "acme", false, "1h")).await;
            assert_eq!(code, 200, "{sub}");
            open.push(res);
        }
    }
    let (code, _) = status("acme", token("dave", "acme", false, "1h")).await;
    assert_eq!(code, 503, "the workspace's share is taken");
    // ...and a member of another workspace still gets a stream (so does the greedy member
    // there: its share is per workspace).
    let (code, _) = status("beta", token("erin", "beta", false, "1h")).await;
    assert_eq!(code, 200, "another workspace is not held out");
    let (code, _) = status("beta", greedy).await;
    assert_eq!(code, 200);
    drop(open);
}

/// Several pages in one stream (`views`: what a browser's widgets share, public/share.js):
/// each page event names its filter and cap and is the page `/recent` gives for them, at once
/// and after a change; malformed views, or views with a cap, are refused before the stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_stream_carries_several_pages_each_as_recent_gives_it() {
    let s = Served::start(&["--live-every", "1h"]);
    let c = s.client();
    let (ada, bob) = (
        token("ada", "acme", true, "1h"),
        token("bob", "acme", true, "1h"),
    );
    for key in ["a", "b", "c"] {
        c.register(&ada, "acme", key).await;
    }
    c.register(&bob, "acme", "d").await;
    let recent = |filter: &'static str, cap: u64| {
        let (c, bob) = (&c, &bob);
        async move {
            let query = format!("filter={filter}&cap={cap}");
            let page = c.page(bob, "acme", &query).await.value();
            (page["cards"].clone(), page["more"].clone())
        }
    };
    let mut events = Events::open_with(&s.url, "acme", &bob, "views=all:2,mine:5").await;
    let mut two_pages = async || {
        let mut pages = std::collections::BTreeMap::new();
        while pages.len() < 2 {
            let (event, data) = events.next().await.expect("the stream ended");
            assert_eq!(event, LiveEvent::Page.as_str(), "{data}");
            let view = (
                data["filter"].as_str().unwrap().to_string(),
                data["cap"].as_u64().unwrap(),
            );
            pages.insert(view, (data["cards"].clone(), data["more"].clone()));
        }
        pages
    };
    let pages = two_pages().await;
    assert_eq!(pages[&("all".to_string(), 2)], recent("all", 2).await);
    assert_eq!(pages[&("mine".to_string(), 5)], recent("mine", 5).await);
    assert_eq!(
        pages[&("all".to_string(), 2)].1,
        json!(true),
        "four items, two shown"
    );

    c.register(&bob, "acme", "e").await;
    let pages = two_pages().await;
    assert_eq!(pages[&("all".to_string(), 2)], recent("all", 2).await);
    assert_eq!(pages[&("mine".to_string(), 5)], recent("mine", 5).await);
    assert_eq!(
        pages[&("mine".to_string(), 5)].0.as_array().unwrap().len(),
        2
    );

    for query in [
        "views=all:x",
        "views=all:2,all:3",
        "views=some:2",
        "views=all:2&cap=3",
    ] {
        let res = Events::subscribe(&s.url, "acme", Some(&bob), query).await;
        assert_eq!(res.err().map(|e| e.status.as_u16()), Some(400), "{query}");
    }
    let res = c.page(&bob, "acme", "views=all:2").await;
    assert_eq!(res.status, 400);
}

/// One rule for a cap on every door (`app::contract::Cap`): a number out of range is brought
/// into 1..=50, never refused, on `/recent`, on `/live` by `cap` and by `views`, and in the
/// widget's server function alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_door_judges_a_cap_alike() {
    let s = Served::start(&["--live-every", "1h"]);
    let c = s.client();
    let ada = token("ada", "acme", true, "1h");
    for key in ["a", "b"] {
        c.register(&ada, "acme", key).await;
    }
    let recent = c.page(&ada, "acme", "cap=0").await.value();
    let server_fn = c
        .post(path::server_fn("recent"))
        .bearer(&ada)
        .json(&json!({"ws": "acme", "filter": "all", "cap": 0, "before": null}))
        .send()
        .await
        .value();
    let mut by_cap = Events::open_with(&s.url, "acme", &ada, "cap=0").await;
    let mut by_views = Events::open_with(&s.url, "acme", &ada, "views=all:0").await;
    let (_, live) = by_cap.next().await.expect("a page");
    let (_, view) = by_views.next().await.expect("a page");
    for (door, page) in [
        ("recent", &recent),
        ("server fn", &server_fn),
        ("live cap", &live),
        ("live views", &view),
    ] {
        assert_eq!(page["cards"].as_array().unwrap().len(), 1, "{door}: {page}");
        assert_eq!(page["more"], json!(true), "{door}: {page}");
    }
    assert_eq!(
        view["cap"],
        json!(1),
        "the view names the cap it was cut at"
    );
}
