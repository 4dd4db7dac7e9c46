//! `pickup` commands run in this process, as the binary runs them (`pickup::cli::run_on` on the
//! parsed command line), writing on buffers the test reads instead of the process's standard
//! output and error. What needs a process (signals, memory, the wrapper's own environment)
//! keeps `super::server::pickup`.

use clap::Parser;
use std::process::ExitCode;

/// How a command ended, and what it wrote.
pub struct Ran {
    /// Its exit code, or the error the binary prints after `pickup: `.
    pub code: Result<ExitCode, String>,
    /// Its standard output, byte for byte.
    pub out: Vec<u8>,
    /// Its own words on standard error (the binary's last line, the error, is not among them).
    pub err: String,
}

impl Ran {
    /// The output as text.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out).into_owned()
    }

    /// The error it ended with (it must have ended with one).
    pub fn refusal(&self) -> &str {
        match &self.code {
            Err(e) => e,
            Ok(code) => panic!("it succeeded ({code:?}): {}{}", self.stdout(), self.err),
        }
    }

    /// It exited with `code`.
    pub fn exited(&self, code: u8) -> bool {
        self.code.as_ref().is_ok_and(|c| *c == ExitCode::from(code))
    }
}

/// `pickup ARGS` (`prune`, `token`, a producer's `item` or `run`, …).
pub async fn pickup(args: &[&str]) -> Ran {
    let console = pickup::cli::Console::captured();
    let argv = std::iter::once("pickup").chain(args.iter().copied());
    let code = match pickup::cli::Cli::try_parse_from(argv) {
        Ok(cli) => pickup::cli::run_on(cli, &console)
            .await
            .map_err(|e| format!("{e:#}")),
        Err(e) => Err(e.to_string()),
    };
    Ran {
        code,
        out: console.out(),
        err: console.err(),
    }
}

/// `pickup ARGS` as a producer of the server at `url` with `token`.
pub async fn producer(url: &str, token: &str, args: &[&str]) -> Ran {
    let mut all = args.to_vec();
    // After the subcommand (and its own subcommand, for `item`): where the flags go.
    let at = if args.first() == Some(&"item") { 2 } else { 1 };
    all.splice(at..at, ["--server", url, "--token", token]);
    pickup(&all).await
}

/// A command running on a task of this runtime, writing on buffers the test reads meanwhile.
pub struct Running {
    console: pickup::cli::Console,
    task: tokio::task::JoinHandle<Result<ExitCode, String>>,
}

impl Running {
    /// `pickup ARGS` as a producer of the server at `url` with `token`, started now.
    pub fn producer(url: &str, token: &str, args: &[&str]) -> Running {
        let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let at = if args.first() == Some(&"item") { 2 } else { 1 };
        let flags = ["--server", url, "--token", token].map(String::from);
        all.splice(at..at, flags);
        let console = pickup::cli::Console::captured();
        let argv = std::iter::once("pickup".to_string()).chain(all);
        let cli = pickup::cli::Cli::try_parse_from(argv).unwrap();
        let task = tokio::spawn({
            let console = console.clone();
            async move {
                pickup::cli::run_on(cli, &console)
                    .await
                    .map_err(|e| format!("{e:#}"))
            }
        });
        Running { console, task }
    }

    /// Its output so far.
    pub fn out(&self) -> Vec<u8> {
        self.console.out()
    }

    /// Its own words so far.
    pub fn err(&self) -> String {
        self.console.err()
    }

    /// Waits until it has said a line with `needle` (in its own words), and answers that line.
    pub async fn said(&self, needle: &str) -> String {
        super::wait::eventually(&format!("a line with {needle:?}"), async || {
            match self.err().lines().find(|l| l.contains(needle)) {
                Some(line) => Ok(line.to_string()),
                None => Err(format!("it said {:?}", self.err())),
            }
        })
        .await
    }

    /// Waits until its output is `want`.
    pub async fn printed(&self, want: &[u8]) {
        super::wait::eventually(
            &format!("output {:?}", String::from_utf8_lossy(want)),
            async || match self.out() {
                out if out == want => Ok(()),
                out => Err(format!("it printed {:?}", String::from_utf8_lossy(&out))),
            },
        )
        .await
    }

    /// Waits for it to end.
    pub async fn ended(self) -> Ran {
        let code = self.task.await.unwrap();
        Ran {
            code,
            out: self.console.out(),
            err: self.console.err(),
        }
    }
}
