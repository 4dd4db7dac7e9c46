//! The one harness that runs this build's `pickup` as a process, for the tests where the process
//! is the point (signals, shutdown, restarts, two servers on one store, clocks under faketime,
//! metrics and logs, settings read at start-up): `pickup serve` on a free loopback port, `pickup
//! token`, and any other subcommand with the same store and secret. Everything else reaches the
//! app in-process (`super::in_process`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const SECRET: &str = "test-secret-test-secret-test-secret!";

/// How long a server may take to say it listens (the clouds' first request can be slow).
const LISTENING_WITHIN: Duration = Duration::from_secs(60);

/// A `pickup serve` child process, killed (by its own handle) when dropped. If the test is
/// failing, the tail of its log is printed first.
pub struct Server {
    pub name: String,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The server's own directory: its store, unless it was given another (`PICKUP_STORE`).
    pub dir: tempfile::TempDir,
    pub secret: String,
    pub child: Child,
    /// `http://127.0.0.1:PORT/metrics` when it was given `PICKUP_METRICS_ADDR`.
    pub metrics_url: Option<String>,
    /// Its standard error, kept apart from the store.
    log: tempfile::NamedTempFile,
}

/// `pickup ARGS` with this secret and store, `PICKUP_LOG=error`, no allowed origins from the
/// calling environment, and `env` on top.
pub fn pickup(args: &[&str], store: &str, secret: &str, env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pickup"));
    cmd.args(args)
        .env("PICKUP_STORE", store)
        .env("PICKUP_SECRET", secret)
        .env("PICKUP_LOG", "error")
        .env_remove("PICKUP_ALLOWED_ORIGINS")
        .envs(env.iter().copied());
    cmd
}

/// A token signed with `secret` for `sub` in the workspaces `ws` (comma-separated), valid for
/// two hours; with `write`, a producer's.
pub fn token(secret: &str, sub: &str, ws: &str, write: bool) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pickup"));
    cmd.args(["token", "--sub", sub, "--ws", ws, "--ttl", "2h"])
        .env("PICKUP_SECRET", secret);
    if write {
        cmd.arg("--write");
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "pickup token: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

impl Server {
    /// A server on a file store of its own (its `dir`), with the test secret and `env` on top.
    pub fn start(env: &[(&str, &str)]) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let store = format!("file://{}", dir.path().display());
        Self::spawn("pickup", dir, &store, SECRET, env)
    }

    /// A server called `name` on the store at `url`, with `secret` and `env` on top: several of
    /// them on one store are one deployment behind a load balancer.
    pub fn start_on(name: &str, url: &str, secret: &str, env: &[(&str, &str)]) -> Server {
        Self::spawn(name, tempfile::tempdir().unwrap(), url, secret, env)
    }

    /// `pickup demo` on a file store of its own, as [`Server::start`] runs `pickup serve`.
    pub fn start_demo(env: &[(&str, &str)]) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let store = format!("file://{}", dir.path().display());
        Self::spawn_command("demo", "pickup demo", dir, &store, SECRET, env)
    }

    fn spawn(
        name: &str,
        dir: tempfile::TempDir,
        store: &str,
        secret: &str,
        env: &[(&str, &str)],
    ) -> Server {
        Self::spawn_command("serve", name, dir, store, secret, env)
    }

    fn spawn_command(
        command: &str,
        name: &str,
        dir: tempfile::TempDir,
        store: &str,
        secret: &str,
        env: &[(&str, &str)],
    ) -> Server {
        let log = tempfile::NamedTempFile::new().unwrap();
        let site = dir.path().join("no-site");
        let mut cmd = pickup(&[command], store, secret, &[]);
        cmd.env("PICKUP_ADDR", "127.0.0.1:0")
            .env("PICKUP_SITE", site)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log.reopen().unwrap());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: start pickup serve: {e}"));
        // The server prints its address once it listens: wait for that line, no sleeps. The
        // rest of its output is drained so it never blocks on a full pipe.
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            for line in lines.by_ref().map_while(Result::ok) {
                let listening = line.contains("listening on ");
                if listening || line.starts_with("metrics on ") {
                    let _ = tx.send(line);
                }
                if listening {
                    break;
                }
            }
            lines.for_each(drop);
        });
        let mut server = Server {
            name: name.to_string(),
            url: String::new(),
            dir,
            secret: secret.to_string(),
            child,
            metrics_url: None,
            log,
        };
        let deadline = std::time::Instant::now() + LISTENING_WITHIN;
        let line = loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line = rx.recv_timeout(left).unwrap_or_else(|_| {
                panic!("{name}: no 'listening on' line within {LISTENING_WITHIN:?}")
            });
            match line.strip_prefix("metrics on ") {
                Some(url) => server.metrics_url = Some(url.trim().to_string()),
                None => break line,
            }
        };
        let url = line
            .split("listening on ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("{name}: unexpected line {line:?}"));
        assert!(url.starts_with("http://127.0.0.1:"), "{name}: {url}");
        server.url = url.to_string();
        server
    }

    /// A token signed with this server's secret (see [`token`]).
    pub fn token(&self, sub: &str, ws: &str, write: bool) -> String {
        token(&self.secret, sub, ws, write)
    }

    /// A client of this server, over its socket.
    pub fn client(&self) -> super::client::TestClient {
        super::client::TestClient::url(&self.url)
    }

    /// `GET /api/v1/workspaces/{ws}/recent?{query}` with `token`, which must answer 200: the
    /// page as it came.
    pub async fn recent_page(&self, token: &str, ws: &str, query: &str) -> serde_json::Value {
        let answer = self.client().page(token, ws, query).await;
        assert_eq!(answer.status, 200, "recent of {ws}: {}", answer.text());
        answer.value()
    }

    /// Its `/metrics` page (it was started with `PICKUP_METRICS_ADDR`).
    pub async fn metrics(&self) -> String {
        let url = self
            .metrics_url
            .as_ref()
            .expect("started with PICKUP_METRICS_ADDR");
        let (base, path) = url.split_at(url.rfind('/').unwrap());
        super::client::TestClient::url(base)
            .get(path)
            .send()
            .await
            .text()
    }

    /// What it has written to standard error so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap()
    }

    /// Every file in the server's own directory (its store, if it has its own), for
    /// before/after comparisons.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut v = walk(self.dir.path());
        v.sort();
        v
    }

    pub fn terminate(&mut self) -> std::process::ExitStatus {
        self.sigterm();
        self.child.wait().unwrap()
    }

    /// SIGTERM, then the exit status if the process ends within `bound`.
    pub fn terminate_within(&mut self, bound: Duration) -> Option<std::process::ExitStatus> {
        self.sigterm();
        let started = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if started.elapsed() > bound {
                return None;
            }
            // Polling a process that has no other way to say it ended, within a bound.
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn sigterm(&self) {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(self.log.path()).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            eprintln!("--- {} log (last 40 lines) ---", self.name);
            for l in tail.iter().rev() {
                eprintln!("{l}");
            }
        }
    }
}

/// Every file below `dir`.
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p))
        } else {
            out.push(p)
        }
    }
    out
}
