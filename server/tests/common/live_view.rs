//! A live page as a viewer's browser holds it, read from a server's stream, and the server's
//! `/readyz` mode: what the bus tests compare with the REST page.

use super::in_process::Served;
use super::stream::{token, Events};
use super::wait::eventually;
use app::contract::LiveEvent;
use serde_json::Value;
use std::time::{Duration, Instant};

/// Long enough for a busy machine.
const BOUND: Duration = Duration::from_secs(20);

pub async fn readyz(s: &Served) -> String {
    s.client().get("/readyz").send().await.text()
}

/// Wait until `/readyz` says `mode` (`facts on the bus`, `the bus is down`).
pub async fn wait_for_mode(s: &Served, mode: &str) {
    let what = format!("{}: /readyz saying {mode:?}", s.url);
    eventually(&what, async || match readyz(s).await {
        body if body.contains(mode) => Ok(()),
        body => Err(format!("it says {body:?}")),
    })
    .await
}

/// A page's cards as (id, title, status).
pub fn cards(page: &Value) -> Vec<(String, String, String)> {
    page["cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().into(),
                c["title"].as_str().unwrap().into(),
                c["status"].as_str().unwrap().into(),
            )
        })
        .collect()
}

/// A viewer's stream and its last page.
pub struct Viewer {
    events: Events,
    pub token: String,
    pub latest: Vec<(String, String, String)>,
}

impl Viewer {
    pub async fn open(s: &Served, sub: &str) -> Viewer {
        let token = token(sub, "acme", false, "1h");
        let mut events = Events::open(&s.url, "acme", &token).await;
        let (_, page) = events.next().await.expect("a first page");
        Viewer {
            events,
            token,
            latest: cards(&page),
        }
    }

    /// Read pages until `want` holds of one.
    pub async fn until(&mut self, what: &str, want: impl Fn(&[(String, String, String)]) -> bool) {
        let deadline = Instant::now() + BOUND;
        while !want(&self.latest) {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.events.next()).await {
                Ok(Some((name, page))) if name == LiveEvent::Page.as_str() => {
                    self.latest = cards(&page)
                }
                Ok(Some(_)) => {}
                Ok(None) => panic!("{what}: the stream ended"),
                Err(_) => panic!("{what}: the live page stayed {:?}", self.latest),
            }
        }
    }

    /// Read pages until the live page is the REST page of `s`.
    pub async fn agrees_with(&mut self, s: &Served, what: &str) {
        let deadline = Instant::now() + BOUND;
        loop {
            let rest = s.client().page(&self.token, "acme", "").await.value();
            let rest = cards(&rest);
            if self.latest == rest {
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.events.next()).await {
                Ok(Some((name, page))) if name == LiveEvent::Page.as_str() => {
                    self.latest = cards(&page)
                }
                Ok(Some(_)) => {}
                Ok(None) => panic!("{what}: the stream ended"),
                Err(_) => panic!(
                    "{what}: the live page {:?} never became the REST page {rest:?}",
                    self.latest
                ),
            }
        }
    }
}
