//! The whole server in this test's process: `pickup::app` from `pickup serve`'s own flags, on a
//! file store of its own. [`InProcess`] is called with `tower::ServiceExt::oneshot` (no socket);
//! [`Served`] is the app as `pickup serve` runs it (prepared, then served by its own accept
//! loop, with its limits and its drain) on a loopback port, in a thread with a runtime of its
//! own, until the test stops it as SIGTERM would ([`Served::stop`]) or drops it. Its metrics and
//! its log are its own (a recorder and a subscriber of that thread's, as a process has one of
//! each), read with [`Served::metrics`] and [`Served::log`]. What needs a real process (signals,
//! the CLI's output and exit codes, the binary's own log formats and metrics listener) keeps
//! [`super::server::Server`].

use super::client::TestClient;
use super::server::{walk, SECRET};
use axum::Router;
use pickup::index::Clock;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `pickup serve`'s flags: no site, no janitor (what a test wants to happen, it does), the test
/// secret, and `flags` on top (a flag given twice is an error: a default gives way).
fn argv(store: &str, site: &Path, flags: &[String], secret: bool) -> Vec<String> {
    let site = site.to_str().unwrap();
    let mut defaults = vec![
        ("--store", store),
        ("--site", site),
        ("--janitor-every", "0s"),
    ];
    if secret {
        defaults.push(("--secret", SECRET));
    }
    let mut args: Vec<String> = defaults
        .into_iter()
        .filter(|(flag, _)| !flags.iter().any(|f| f == flag))
        .flat_map(|(flag, value)| [flag.to_string(), value.to_string()])
        .collect();
    args.extend(flags.iter().cloned());
    args
}

pub struct InProcess {
    pub app: pickup::App,
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
        let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        let args = argv(store, &dir.path().join("no-site"), &flags, true);
        let config = pickup::cli::ServeArgs::parse_config(args).unwrap();
        let app = pickup::app(&config).await.unwrap();
        InProcess { app, dir }
    }

    pub fn router(&self) -> Router {
        self.app.router()
    }

    /// A client that calls the app in this process.
    pub fn client(&self) -> TestClient {
        TestClient::router(self.app.router())
    }

    /// Every file of the store, sorted.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut v = walk(self.dir.path());
        v.sort();
        v
    }
}

/// How a [`Served`] server is made: `pickup serve`'s flags, and what a process would have
/// from outside (its store, its address, its clock, `pickup demo`).
pub struct Serving {
    flags: Vec<String>,
    store: Option<String>,
    addr: String,
    secret: bool,
    demo: bool,
    clock: Option<Arc<dyn Clock>>,
    store_options: Vec<(String, String)>,
    log_filter: String,
}

impl Serving {
    pub fn new(flags: &[&str]) -> Serving {
        Serving {
            flags: flags.iter().map(|f| f.to_string()).collect(),
            store: None,
            addr: "127.0.0.1:0".into(),
            secret: true,
            demo: false,
            clock: None,
            store_options: Vec::new(),
            log_filter: "info,tower_http=warn".into(),
        }
    }

    /// What its log keeps, as `PICKUP_LOG` says it (`warn`, `info,tower_http=debug`).
    pub fn log_filter(mut self, filter: &str) -> Serving {
        self.log_filter = filter.into();
        self
    }

    /// A store option (`AWS_ENDPOINT`, named as the environment names it) of this server's
    /// own, over the environment's.
    pub fn store_option(mut self, name: &str, value: &str) -> Serving {
        self.store_options.push((name.into(), value.into()));
        self
    }

    /// On the store at `url` (several servers on one store are one deployment behind a load
    /// balancer), not a file store of its own.
    pub fn store(mut self, url: &str) -> Serving {
        self.store = Some(url.into());
        self
    }

    /// On `addr` (a port chosen before, that nothing listens on now: a restart on the same
    /// port).
    pub fn at(mut self, addr: &str) -> Serving {
        self.addr = addr.into();
        self
    }

    /// With no `--secret`: tokens only from an identity provider (`--jwks-url`).
    pub fn without_secret(mut self) -> Serving {
        self.secret = false;
        self
    }

    /// Telling the time by `clock`: a server whose clock is off.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Serving {
        self.clock = Some(clock);
        self
    }

    /// `pickup demo`: the demo workspace seeded and kept working.
    pub fn demo(mut self) -> Serving {
        self.demo = true;
        self
    }

    pub fn start(self) -> Served {
        let dir = tempfile::tempdir().unwrap();
        let store = self
            .store
            .clone()
            .unwrap_or_else(|| format!("file://{}", dir.path().display()));
        let args = argv(
            &store,
            &dir.path().join("no-site"),
            &self.flags,
            self.secret,
        );
        let (url_tx, url_rx) = std::sync::mpsc::channel::<Result<String, String>>();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (kill, killed) = tokio::sync::oneshot::channel::<()>();
        let Serving {
            addr,
            demo,
            clock,
            store_options,
            log_filter,
            ..
        } = self;
        let (recorder, metrics) = recorder();
        let log = Log::default();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(log_filter))
            .with_ansi(false)
            .with_writer({
                let log = log.clone();
                move || log.clone()
            })
            .finish();
        let thread = std::thread::spawn(move || {
            // Everything the server does runs on this thread: these are its recorder and its
            // subscriber, as a process's global ones are.
            let _metrics = metrics::set_default_local_recorder(recorder);
            let _log = tracing::subscriber::set_default(subscriber);
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let started = async {
                    let mut config = if demo {
                        pickup::cli::DemoArgs::parse_config(args)
                    } else {
                        pickup::cli::ServeArgs::parse_config(args)
                    }
                    .map_err(|e| format!("{e:#}"))?;
                    if let Some(clock) = clock {
                        config.clock = clock;
                    }
                    config.store_options = store_options;
                    let app = pickup::app(&config).await.map_err(|e| format!("{e:#}"))?;
                    app.prepare().await.map_err(|e| format!("{e:#}"))?;
                    let listener = tokio::net::TcpListener::bind(&addr)
                        .await
                        .map_err(|e| format!("{addr}: {e}"))?;
                    Ok::<_, String>((app, listener))
                };
                let (app, listener) = match started.await {
                    Ok(started) => started,
                    Err(e) => return drop(url_tx.send(Err(e))),
                };
                let url = format!("http://{}", listener.local_addr().unwrap());
                url_tx.send(Ok(url)).unwrap();
                tokio::select! {
                    () = app.serve(listener, async { drop(stopped.await) }) => {}
                    _ = killed => {}
                }
            });
        });
        let url = match url_rx.recv().expect("the in-process server's thread ended") {
            Ok(url) => url,
            Err(e) => panic!("the in-process server did not start: {e}"),
        };
        Served {
            url,
            dir,
            metrics,
            log,
            stop: Some(stop),
            kill: Some(kill),
            thread: Some(thread),
        }
    }

    /// The error the server refuses to start with (it must refuse).
    pub fn refused(self) -> String {
        let flags = self.flags.clone();
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.start())) {
            Ok(_) => panic!("the server started with {flags:?}"),
            Err(e) => e
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default()
                .trim_start_matches("the in-process server did not start: ")
                .to_string(),
        }
    }
}

/// The app as `pickup serve` runs it, on a loopback port, in a thread of this process with a
/// runtime of its own: a test may block on a child (`pickup run`) while the server answers it.
/// Dropping it stops the runtime, and with it the listener, every connection and every task
/// the app started (as a killed process would): nothing it served outlives the test.
pub struct Served {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    pub dir: tempfile::TempDir,
    metrics: metrics_exporter_prometheus::PrometheusHandle,
    log: Log,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    kill: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Served {
    /// On a file store of its own (its `dir`) and a free port, with `flags` on top.
    pub fn start(flags: &[&str]) -> Served {
        Serving::new(flags).start()
    }

    /// Several servers on the store at `url`.
    pub fn start_on(url: &str, flags: &[&str]) -> Served {
        Serving::new(flags).store(url).start()
    }

    /// Stops it as SIGTERM stops `pickup serve` (streams told to reconnect, requests in flight
    /// finished, writes run to their end, within the shutdown grace), and waits until it has.
    pub async fn stop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let ended = tokio::task::spawn_blocking(move || thread.join())
                .await
                .unwrap();
            assert!(ended.is_ok(), "the in-process server panicked");
        }
    }

    /// A client over the socket.
    pub fn client(&self) -> TestClient {
        TestClient::url(&self.url)
    }

    /// Its `/metrics` page as `PICKUP_METRICS_ADDR` would serve it (without the HELP lines,
    /// which the process's own recorder has).
    pub fn metrics(&self) -> String {
        self.metrics.render()
    }

    /// What it has logged so far, as text.
    pub fn log(&self) -> String {
        String::from_utf8_lossy(&self.log.0.lock().unwrap()).into_owned()
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

    /// The URL of its file store, for another server on the same one.
    pub fn store_url(&self) -> String {
        format!("file://{}", self.dir.path().display())
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        drop(self.kill.take());
        if let Some(thread) = self.thread.take() {
            let ended = thread.join();
            if ended.is_err() && !std::thread::panicking() {
                panic!("the in-process server panicked");
            }
        }
    }
}

/// A recorder of its own for one server, as `PICKUP_METRICS_ADDR` installs one per process:
/// latencies as histograms, with the process's buckets. Leaked: it outlives the server's
/// thread, whose default it is.
fn recorder() -> (
    &'static metrics_exporter_prometheus::PrometheusRecorder,
    metrics_exporter_prometheus::PrometheusHandle,
) {
    use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
    const BUCKETS: &[f64] = &[0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0];
    let recorder = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), BUCKETS)
        .unwrap()
        .build_recorder();
    let recorder: &'static _ = Box::leak(Box::new(recorder));
    (recorder, recorder.handle())
}

/// A server's log, kept in memory.
#[derive(Clone, Default)]
struct Log(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Log {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
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

/// A clock that is off: this machine's, moved by an offset the test can step mid-run, the way
/// NTP steps a clock (the monotonic clock, which measures the store's, is left alone, as NTP
/// leaves it).
#[derive(Debug, Default)]
pub struct OffsetClock(std::sync::atomic::AtomicI64);

impl OffsetClock {
    /// `offset_ms` ahead of this machine's clock (behind, when negative).
    pub fn new(offset_ms: i64) -> Arc<OffsetClock> {
        Arc::new(OffsetClock(offset_ms.into()))
    }

    pub fn set(&self, offset_ms: i64) {
        self.0.store(offset_ms, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Clock for OffsetClock {
    fn now_ms(&self) -> u64 {
        let now = pickup::index::SystemClock.now_ms() as i64;
        (now + self.0.load(std::sync::atomic::Ordering::SeqCst)).max(0) as u64
    }
}

/// `pickup serve`'s flags for settings named as the environment names them
/// (`("PICKUP_LIVE_EVERY", "1h")` is `--live-every 1h`): every setting is both.
pub fn flags(settings: &[(&str, &str)]) -> Vec<String> {
    settings
        .iter()
        .flat_map(|(name, value)| {
            let flag = name
                .strip_prefix("PICKUP_")
                .unwrap_or_else(|| panic!("{name} is not a PICKUP_ setting"))
                .to_lowercase()
                .replace('_', "-");
            [format!("--{flag}"), value.to_string()]
        })
        .collect()
}
