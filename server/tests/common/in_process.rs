//! The whole server in this test's process: `pickup::app` from `pickup serve`'s own flags, on a
//! file store of its own. [`InProcess`] is called with `tower::ServiceExt::oneshot` (no socket,
//! no child); [`Served`] puts it on a loopback port for what needs one (streams, `pickup run`,
//! raw connections). What needs a real process (signals, shutdown, the accept loop's limits,
//! scale-out, clocks, metrics) keeps [`super::server::Server`].

use super::client::TestClient;
use super::server::{walk, SECRET};
use axum::Router;
use std::path::{Path, PathBuf};

/// `pickup serve`'s app from its flags, as [`super::server::Server`] starts it (no site, no
/// janitor: what a test wants to happen, it does), `flags` on top.
async fn app(store: &str, site: &Path, flags: &[&str], secret: bool) -> Router {
    let site = site.to_str().unwrap();
    let mut defaults = vec![
        ("--store", store),
        ("--site", site),
        ("--janitor-every", "0s"),
    ];
    if secret {
        defaults.push(("--secret", SECRET));
    }
    // A flag given twice is an error: a default gives way to the test's own.
    let mut args: Vec<&str> = defaults
        .into_iter()
        .filter(|(flag, _)| !flags.contains(flag))
        .flat_map(|(flag, value)| [flag, value])
        .collect();
    args.extend_from_slice(flags);
    let config = pickup::cli::ServeArgs::parse_config(args).unwrap();
    pickup::app(&config).await.unwrap().router
}

pub struct InProcess {
    pub router: Router,
    pub dir: tempfile::TempDir,
}

impl InProcess {
    /// A server with `serve`'s defaults and `flags` on top, on a file store of its own.
    pub async fn start(flags: &[&str]) -> InProcess {
        let dir = tempfile::tempdir().unwrap();
        let store = format!("file://{}", dir.path().display());
        Self::start_on(dir, &store, flags).await
    }

    /// A server on the store at `store` (its own `dir` for anything else).
    pub async fn start_on(dir: tempfile::TempDir, store: &str, flags: &[&str]) -> InProcess {
        let router = app(store, &dir.path().join("no-site"), flags, true).await;
        InProcess { router, dir }
    }

    /// A client that calls the app in this process.
    pub fn client(&self) -> TestClient {
        TestClient::router(self.router.clone())
    }

    /// Every file of the store, sorted.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut v = walk(self.dir.path());
        v.sort();
        v
    }
}

/// An app like [`InProcess`]'s on a loopback port (`axum::serve`'s loop), in a thread of this
/// process with a runtime of its own: a test may block on a child (`pickup run`) while the
/// server answers it. Dropping it stops the runtime, and with it the listener, every
/// connection and every task the app started: nothing it served outlives the test.
pub struct Served {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    pub dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Served {
    /// On a file store of its own (its `dir`) and a free port, with `flags` on top.
    pub fn start(flags: &[&str]) -> Served {
        Self::start_at("127.0.0.1:0", flags)
    }

    /// On `addr` (a port chosen before, that nothing listens on yet).
    pub fn start_at(addr: &str, flags: &[&str]) -> Served {
        Self::spawn(addr, flags, true)
    }

    /// With no `--secret`: tokens only from an identity provider (`--jwks-url`).
    pub fn start_without_secret(flags: &[&str]) -> Served {
        Self::spawn("127.0.0.1:0", flags, false)
    }

    fn spawn(addr: &str, flags: &[&str], secret: bool) -> Served {
        let dir = tempfile::tempdir().unwrap();
        let store = format!("file://{}", dir.path().display());
        let (addr, flags) = (
            addr.to_string(),
            flags.iter().map(|f| f.to_string()).collect::<Vec<_>>(),
        );
        let site = dir.path().join("no-site");
        let (url_tx, url_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
                let router = app(&store, &site, &flags, secret).await;
                let listener = tokio::net::TcpListener::bind(&addr).await.unwrap();
                url_tx
                    .send(format!("http://{}", listener.local_addr().unwrap()))
                    .unwrap();
                tokio::select! {
                    _ = accept(listener, router) => {}
                    _ = stopped => {}
                }
            });
        });
        let url = url_rx.recv().expect("the in-process server did not start");
        Served {
            url,
            dir,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// A client over the socket.
    pub fn client(&self) -> TestClient {
        TestClient::url(&self.url)
    }

    /// Every file of the store, sorted.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut v = walk(self.dir.path());
        v.sort();
        v
    }

    /// `host:port`, for a raw connection.
    pub fn addr(&self) -> &str {
        self.url.trim_start_matches("http://")
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let ended = thread.join();
            if ended.is_err() && !std::thread::panicking() {
                panic!("the in-process server panicked");
            }
        }
    }
}

/// A router of the test's own (a peer it plays: an identity provider, a hostile server) on a
/// loopback port of this runtime, until dropped: then the listener and its connections end.
pub struct Listening {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Listening {
    pub async fn start(router: Router) -> Listening {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(accept(listener, router));
        Listening { url, task }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        // The connections are the task's own (see `accept`): they end with it.
        self.task.abort();
    }
}

/// `axum::serve`'s loop, but each connection is a task of this one's (a `JoinSet`), so that
/// ending it ends them too (`axum::serve` detaches its connections, and an open stream would
/// outlive the server).
async fn accept(listener: tokio::net::TcpListener, router: Router) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        connections.spawn(async move {
            let io = hyper_util::rt::TokioIo::new(tcp);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
        while connections.try_join_next().is_some() {}
    }
}
