//! Live streams as a browser's `fetch` reads them: server-sent events, parsed, from a real
//! `pickup serve`; and the calls the stream tests make around them.

use super::server::{Server, SECRET};
use serde_json::{json, Value};
use std::process::Command;
use std::time::Duration;

/// Long enough for a busy machine; a stream that says nothing for this long has failed.
pub const PATIENCE: Duration = Duration::from_secs(20);

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

pub fn token(sub: &str, ws: &str, write: bool, ttl: &str) -> String {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pickup"));
    c.args(["token", "--sub", sub, "--ws", ws, "--ttl", ttl])
        .env("PICKUP_SECRET", SECRET);
    if write {
        c.arg("--write");
    }
    String::from_utf8(c.output().unwrap().stdout)
        .unwrap()
        .trim()
        .to_string()
}

/// `GET url` with `token`, its JSON answer.
pub async fn get_json(url: &str, token: &str) -> Value {
    client()
        .get(url)
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// A stream of server-sent events, parsed.
pub struct Events {
    res: reqwest::Response,
    buf: String,
}

impl Events {
    pub async fn open(s: &Server, ws: &str, token: &str) -> Events {
        Self::open_with(s, ws, token, "").await
    }

    /// A stream with a query (`views=all:2,mine:5`).
    pub async fn open_with(s: &Server, ws: &str, token: &str, query: &str) -> Events {
        let res = client()
            .get(format!("{}/api/v1/workspaces/{ws}/live?{query}", s.url))
            .bearer_auth(token)
            .header("accept", "text/event-stream")
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        assert_eq!(
            res.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        Events {
            res,
            buf: String::new(),
        }
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
        assert_eq!(event, "page", "{data}");
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

pub async fn register(s: &Server, token: &str, key: &str) -> String {
    let res = client()
        .post(format!("{}/api/v1/workspaces/acme/items", s.url))
        .bearer_auth(token)
        .json(&json!({"key": key, "title": format!("item {key}"), "status": "running"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    res.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string()
}
