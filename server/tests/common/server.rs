//! A real `pickup serve` on a free port with its own file store, for tests over real HTTP.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

pub const SECRET: &str = "test-secret-test-secret-test-secret!";

pub struct Server {
    pub url: String,
    pub dir: tempfile::TempDir,
    pub child: Child,
}

impl Server {
    pub fn start(extra_env: &[(&str, &str)]) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_pickup"))
            .arg("serve")
            .env("PICKUP_ADDR", "127.0.0.1:0")
            .env("PICKUP_STORE", format!("file://{}", dir.path().display()))
            .env("PICKUP_SECRET", SECRET)
            .env("PICKUP_SITE", dir.path().join("no-site"))
            .env("PICKUP_LOG", "error")
            .envs(extra_env.iter().copied())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        // The server prints its address once it listens: wait for that line, no sleeps.
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let url = loop {
            let line = lines
                .next()
                .expect("pickup exited before listening")
                .unwrap();
            if let Some(rest) = line.split("listening on ").nth(1) {
                break rest.split_whitespace().next().unwrap().to_string();
            }
        };
        std::thread::spawn(move || lines.for_each(drop));
        Server { url, dir, child }
    }

    pub fn token(&self, sub: &str, ws: &str, write: bool) -> String {
        let mut c = Command::new(env!("CARGO_BIN_EXE_pickup"));
        c.args(["token", "--sub", sub, "--ws", ws])
            .env("PICKUP_SECRET", SECRET);
        if write {
            c.arg("--write");
        }
        String::from_utf8(c.output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string()
    }

    /// Every file in the store, for before/after comparisons.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut v = walk(self.dir.path());
        v.sort();
        v
    }

    pub fn terminate(&mut self) -> std::process::ExitStatus {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        self.child.wait().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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

impl Server {
    /// SIGTERM, then the exit status if the process ends within `bound`.
    pub fn terminate_within(
        &mut self,
        bound: std::time::Duration,
    ) -> Option<std::process::ExitStatus> {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        let started = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if started.elapsed() > bound {
                return None;
            }
            // Polling a process that has no other way to say it ended, within a bound.
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
