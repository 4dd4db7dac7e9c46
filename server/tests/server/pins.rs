//! Pins at the doors, over real HTTP to the app served in this process: the REST routes and
//! the widget's server function, the viewer always the token's, the same errors as every
//! route, and a pin on one device live on the viewer's other.

use crate::common::client::{path, token};
use crate::common::in_process::Served;
use crate::common::stream::{self, Events};
use axum::http::{header, Method, StatusCode};
use serde_json::Value;

fn pins(res: &crate::common::client::Answer) -> Vec<String> {
    let v: Value = res.value();
    v["pins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pins_are_the_viewers_own_at_every_door() {
    let s = Served::start(&[]);
    let c = s.client();
    let writer = token("ci", "acme", true);
    let (alice, bob) = (token("alice", "acme", false), token("bob", "acme", false));
    let id = c.register(&writer, "acme", "run").await.id;

    let put = c
        .request(Method::PUT, &path::pin("acme", &id))
        .bearer(&alice)
        .send()
        .await;
    assert_eq!(put.status, StatusCode::NO_CONTENT, "{}", put.text());
    let got = c.get(&path::pins("acme")).bearer(&alice).send().await;
    assert_eq!((got.status, pins(&got)), (StatusCode::OK, vec![id.clone()]));
    let bobs = c.get(&path::pins("acme")).bearer(&bob).send().await;
    assert_eq!(
        pins(&bobs),
        Vec::<String>::new(),
        "another member's pins are never seen"
    );
    let page = c.recent(&alice, "acme", "cap=1").await;
    assert!(page.cards[0].pinned);
    assert!(!c.recent(&bob, "acme", "cap=1").await.cards[0].pinned);

    // The server function, as the widget calls it: unpin, then pin again.
    for (pinned, want) in [("false", vec![]), ("true", vec![id.clone()])] {
        let args = [("ws", "acme"), ("id", id.as_str()), ("pinned", pinned)];
        let res = c.server_fn("pin", &args, Some(&alice)).await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.text());
        let got = c.get(&path::pins("acme")).bearer(&alice).send().await;
        assert_eq!(pins(&got), want);
    }
    let del = c
        .request(Method::DELETE, &path::pin("acme", &id))
        .bearer(&alice)
        .send()
        .await;
    assert_eq!(del.status, StatusCode::NO_CONTENT);

    // The same refusals as every route.
    let other = token("alice", "beta", false);
    let huge = "x".repeat(70 * 1024);
    let gone = format!("{}_gone", id.split('_').next().unwrap());
    for (method, route, token, body, want) in [
        (
            Method::PUT,
            path::pin("acme", &id),
            None,
            None,
            (StatusCode::UNAUTHORIZED, "unauthenticated"),
        ),
        (
            Method::PUT,
            path::pin("acme", &id),
            Some(&other),
            None,
            (StatusCode::FORBIDDEN, "forbidden"),
        ),
        (
            Method::GET,
            path::pins("acme"),
            Some(&other),
            None,
            (StatusCode::FORBIDDEN, "forbidden"),
        ),
        (
            Method::PUT,
            path::pin("acme", "not-an-id"),
            Some(&alice),
            None,
            (StatusCode::BAD_REQUEST, "invalid_name"),
        ),
        (
            Method::PUT,
            path::pin("acme", &gone),
            Some(&alice),
            None,
            (StatusCode::NOT_FOUND, "not_found"),
        ),
        (
            Method::PUT,
            path::pin("acme", &id),
            Some(&alice),
            Some(huge),
            (StatusCode::PAYLOAD_TOO_LARGE, "too_large"),
        ),
    ] {
        let mut call = c
            .request(method.clone(), &route)
            .token(token.map(String::as_str));
        if let Some(body) = body {
            call = call.raw_json(body);
        }
        let res = call.send().await;
        assert_eq!((res.status, res.error().as_str()), want, "{method} {route}");
        if res.status == StatusCode::PAYLOAD_TOO_LARGE {
            // The body is left unread: a client that reused this connection would lose its
            // next request.
            assert_eq!(res.headers[header::CONNECTION], "close");
        }
    }
    let args = [
        ("ws", "acme"),
        ("id", id.as_str()),
        ("pinned", "true"),
        ("user", "bob"),
    ];
    let res = c.server_fn("pin", &args, Some(&alice)).await;
    assert_eq!(res.error(), "invalid_body", "{}", res.text());

    // The eleventh pin: 409, and nothing written.
    for i in 0..11 {
        let id = c.register(&writer, "acme", &format!("p{i}")).await.id;
        let res = c
            .request(Method::PUT, &path::pin("acme", &id))
            .bearer(&bob)
            .send()
            .await;
        let want = if i < 10 {
            StatusCode::NO_CONTENT
        } else {
            StatusCode::CONFLICT
        };
        assert_eq!(res.status, want, "pin {}: {}", i + 1, res.text());
        if i == 10 {
            assert_eq!(res.error(), "too_many_pins");
            assert!(res.text().contains("unpin one first"), "{}", res.text());
        }
    }
    let got = c.get(&path::pins("acme")).bearer(&bob).send().await;
    assert_eq!(pins(&got).len(), 10);
}

/// A pin on one device reaches the viewer's other open page live, and no one else's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pin_reaches_the_viewers_other_device_live() {
    let s = Served::start(&["--live-every", "1h"]);
    let c = s.client();
    let writer = stream::token("ci", "acme", true, "1h");
    let alice = stream::token("alice", "acme", false, "1h");
    let bob = stream::token("bob", "acme", false, "1h");
    let old = c.register(&writer, "acme", "old").await.id;
    let new = c.register(&writer, "acme", "new").await.id;
    let query = "filter=all&cap=1";
    let mut other_device = Events::open_with(&s.url, "acme", &alice, query).await;
    let mut bobs = Events::open_with(&s.url, "acme", &bob, query).await;
    assert_eq!(
        other_device.page().await,
        vec![(new.clone(), "running".into())]
    );
    assert_eq!(bobs.page().await, vec![(new.clone(), "running".into())]);

    let args = [("ws", "acme"), ("id", old.as_str()), ("pinned", "true")];
    let res = c.server_fn("pin", &args, Some(&alice)).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.text());
    let (event, page) = other_device.next().await.unwrap();
    assert_eq!(event, "page");
    let shown: Vec<(&str, bool)> = page["cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap(), c["pinned"].as_bool().unwrap()))
        .collect();
    assert_eq!(shown, vec![(old.as_str(), true), (new.as_str(), false)]);

    let args = [("ws", "acme"), ("id", old.as_str()), ("pinned", "false")];
    c.server_fn("pin", &args, Some(&alice)).await;
    assert_eq!(
        other_device.page().await,
        vec![(new.clone(), "running".into())]
    );
    // Bob's page never changed: the next page he gets is the one a write brings.
    c.register(&writer, "acme", "newest").await;
    let page = bobs.page().await;
    assert_eq!(page.len(), 1, "{page:?}");
    assert_ne!(page[0].0, old);
}
