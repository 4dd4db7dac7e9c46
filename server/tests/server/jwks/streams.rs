//! A live stream lasts no longer than the key that allowed it.

use super::*;
use crate::common::client::path;
use app::contract::LiveEvent;

/// The live stream of `acme` on the server at `url`, which must be opened.
async fn live(url: &str, token: &str) -> reqwest::Response {
    let res = crate::common::stream::client()
        .get(format!("{url}{}", path::live("acme")))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    res
}

/// The text of a live stream until its closing event (`unauthenticated` or `reconnect`), or
/// `None` if none came within `bound`.
async fn closing_event(res: reqwest::Response, bound: std::time::Duration) -> Option<String> {
    let read = async move {
        let mut res = res;
        let mut text = String::new();
        while let Some(chunk) = res.chunk().await.ok().flatten() {
            text.push_str(&String::from_utf8_lossy(&chunk));
            for closing in ["event: unauthenticated", "event: reconnect"] {
                if text.contains(closing) {
                    return closing.trim_start_matches("event: ").to_string();
                }
            }
        }
        "the stream ended without a closing event".to_string()
    };
    tokio::time::timeout(bound, read).await.ok()
}

/// A live stream lasts no longer than what allowed it: once its token's key has left the
/// provider's set (and the server has refreshed it), the stream ends as unauthenticated,
/// while a stream of a key that stayed goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_stream_ends_when_its_key_leaves_the_key_set() {
    let (leaving, staying) = (Key::rsa("leaving"), Key::ed25519("staying"));
    let (idp, url) = Idp::start(&[&leaving, &staying]).await;
    let mut env = jwks_env(&url, "0s");
    env.push(("PICKUP_JWKS_REFRESH", "1s"));
    let pickup = Pickup::start(&env, false).await;
    let open = |token: String| {
        let url = pickup.url.clone();
        async move { live(&url, &token).await }
    };
    let doomed = open(leaving.sign(&claims("alice", false))).await;
    let lasting = open(staying.sign(&claims("bob", false))).await;
    idp.set(&[&staying]);
    assert_eq!(
        closing_event(doomed, std::time::Duration::from_secs(20))
            .await
            .as_deref(),
        Some(LiveEvent::Unauthenticated.as_str()),
        "the withdrawn key's stream ends"
    );
    // The other stream is still open after the refreshes that ended the first.
    assert_eq!(
        closing_event(lasting, std::time::Duration::from_secs(5)).await,
        None,
        "a stream of a key that stayed goes on"
    );
}

/// A busy stream is checked too: while a writer keeps changing its page, its key leaves the
/// set, and the stream ends at that refresh (the check used to be re-armed by every page, so a
/// busy stream lasted until `exp`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_live_stream_ends_at_the_refresh_that_drops_its_key() {
    let (leaving, staying) = (Key::rsa("leaving"), Key::ed25519("staying"));
    let (idp, url) = Idp::start(&[&leaving, &staying]).await;
    let mut env = jwks_env(&url, "0s");
    env.push(("PICKUP_JWKS_REFRESH", "1s"));
    env.push(("PICKUP_LIVE_EVERY", "100ms"));
    let pickup = Arc::new(Pickup::start(&env, false).await);
    let res = live(&pickup.url, &leaving.sign(&claims("alice", false))).await;
    // A page for the stream every few hundred milliseconds, until the test ends.
    let writer = staying.sign(&claims("bob", true));
    let busy = {
        let (pickup, writer) = (pickup.clone(), writer.clone());
        tokio::spawn(async move {
            for i in 0.. {
                let body = json!({"key": format!("k{i}"), "title": "busy", "status": "running"});
                let res = pickup.client().registered(&writer, "acme", &body).await;
                assert_eq!(res.status, StatusCode::CREATED);
                tokio::time::sleep(std::time::Duration::from_millis(150)).await;
            }
        })
    };
    idp.set(&[&staying]);
    let closing = closing_event(res, std::time::Duration::from_secs(20)).await;
    busy.abort();
    let _ = busy.await;
    assert_eq!(
        closing.as_deref(),
        Some(LiveEvent::Unauthenticated.as_str()),
        "the busy stream of a withdrawn key ends"
    );
}

// ---------------------------------------------------------------------------------------------
// A hostile identity provider (issue 26)
