//! The whole server in this test's process: `pickup::app` from `pickup serve`'s own flags, on a
//! file store of its own, called with `tower::ServiceExt::oneshot` (no socket, no child). For
//! the contract's answers; what needs a real process (signals, sockets, scale-out) keeps
//! [`super::server::Server`].

use super::server::{walk, SECRET};
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use axum::Router;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;
use tower::ServiceExt;

pub struct InProcess {
    pub router: Router,
    pub dir: tempfile::TempDir,
    auth: pickup::http::Auth,
}

impl InProcess {
    /// A server with `serve`'s defaults and `flags` on top.
    pub async fn start(flags: &[&str]) -> InProcess {
        let dir = tempfile::tempdir().unwrap();
        let store = format!("file://{}", dir.path().display());
        let mut args = vec![
            "--store",
            &store,
            "--secret",
            SECRET,
            "--janitor-every",
            "0s",
        ];
        args.extend_from_slice(flags);
        let config = pickup::cli::ServeArgs::parse_config(args).unwrap();
        let app = pickup::app(&config).await.unwrap();
        InProcess {
            router: app.router,
            dir,
            auth: pickup::http::Auth::new(SECRET.as_bytes()).unwrap(),
        }
    }

    /// A token for `sub` in `ws` (comma-separated), valid for two hours.
    pub fn token(&self, sub: &str, ws: &str, write: bool) -> String {
        let ws: Vec<String> = ws.split(',').map(String::from).collect();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        self.auth
            .mint(sub, None, &ws, write, Duration::from_secs(7200), now)
    }

    /// One request; the answer's status and body (JSON, or `Null` when it is not JSON).
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> (StatusCode, Value) {
        let mut req = Request::builder().method(method).uri(path);
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let req = match body {
            Some(b) => req
                .header("content-type", "application/json")
                .body(Body::from(serde_json::to_vec(b).unwrap())),
            None => req.body(Body::empty()),
        }
        .unwrap();
        let res = self.router.clone().oneshot(req).await.unwrap();
        let status = res.status();
        let bytes = axum::body::to_bytes(res.into_body(), usize::MAX)
            .await
            .unwrap();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    /// Every file of the store, sorted.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut v = walk(self.dir.path());
        v.sort();
        v
    }
}
