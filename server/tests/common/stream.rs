//! Live streams as a browser's `fetch` reads them: server-sent events, parsed, from a server
//! on a socket (a [`super::in_process::Served`] app or a `pickup serve` child).

use super::client::{token_for, Answer};
use app::contract::LiveEvent;
use serde_json::Value;
use std::time::Duration;

/// Long enough for a busy machine; a stream that says nothing for this long has failed.
pub const PATIENCE: Duration = Duration::from_secs(20);

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// A token for `sub` in `ws`, valid for `ttl` (`1h`, `2s`).
pub fn token(sub: &str, ws: &str, write: bool, ttl: &str) -> String {
    token_for(sub, ws, write, humantime::parse_duration(ttl).unwrap())
}

/// A stream of server-sent events, parsed.
pub struct Events {
    res: reqwest::Response,
    buf: String,
}

impl Events {
    /// The live stream of `ws` from the server at `url`.
    pub async fn open(url: &str, ws: &str, token: &str) -> Events {
        Self::open_with(url, ws, token, "").await
    }

    /// A stream with a query (`views=all:2,mine:5`).
    pub async fn open_with(url: &str, ws: &str, token: &str, query: &str) -> Events {
        let events = Self::subscribe(url, ws, Some(token), query).await;
        events.unwrap_or_else(|refused| panic!("refused: {refused:?}"))
    }

    /// A subscription: the open stream, or the refusal, read whole.
    pub async fn subscribe(
        url: &str,
        ws: &str,
        token: Option<&str>,
        query: &str,
    ) -> Result<Events, Answer> {
        let mut req = client()
            .get(format!("{url}{}?{query}", super::client::path::live(ws)))
            .header("accept", "text/event-stream");
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        let res = req.send().await.unwrap();
        if res.status() != 200 {
            let (status, headers) = (res.status(), res.headers().clone());
            let body = res.bytes().await.unwrap();
            return Err(Answer {
                status,
                headers,
                body,
            });
        }
        assert_eq!(
            res.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        Ok(Events {
            res,
            buf: String::new(),
        })
    }

    /// The next event (name and data), skipping keep-alive comments; `None` when the stream
    /// ends.
    pub async fn next(&mut self) -> Option<(String, Value)> {
        tokio::time::timeout(PATIENCE, self.next_now())
            .await
            .expect("the stream said nothing")
    }

    async fn next_now(&mut self) -> Option<(String, Value)> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let (mut event, mut data) = (String::new(), String::new());
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        event = v.trim().to_string();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim());
                    }
                }
                if event.is_empty() {
                    continue;
                }
                return Some((event, serde_json::from_str(&data).unwrap()));
            }
            let chunk = self.res.chunk().await.unwrap()?;
            self.buf.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }

    /// The next page's card ids and statuses.
    pub async fn page(&mut self) -> Vec<(String, String)> {
        let (event, data) = self.next().await.expect("the stream ended");
        assert_eq!(event, LiveEvent::Page.as_str(), "{data}");
        data["cards"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let field = |f: &str| c[f].as_str().unwrap().to_string();
                (field("id"), field("status"))
            })
            .collect()
    }
}
