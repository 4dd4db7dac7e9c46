//! The `pickup` binary as scripts use it: its commands run in this process as the binary runs
//! them (their output and errors read from buffers), and as a process where the signal is the
//! point.

use crate::common;
use app::contract::LiveEvent;

use crate::common::cli;
use crate::common::client::token;
use crate::common::in_process::Serving;
use app::contract::{NewItem, Status};
use pickup::index::{Clock, Index, Limits, ManualClock, Producer, SystemClock, UserId, Workspace};
use std::process::Command;
use std::sync::Arc;

fn file_count(dir: &std::path::Path) -> usize {
    common::server::walk(dir).len()
}

/// A file store in a fresh directory, and its URL: a workspace `demo` with three items of
/// three owners, one of them run twice (the first run finished 20 minutes ago, superseded by
/// the one running now).
async fn demo_store() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.path().display());
    let index = Index::open(&url, Limits::default(), 8, Arc::new(SystemClock)).unwrap();
    let ws = Workspace::parse("demo").unwrap();
    let now = SystemClock.now_ms();
    for (key, who, status, minutes_ago) in [
        ("nightly-train", "ada", Status::Succeeded, 20),
        ("nightly-train", "ada", Status::Running, 5),
        ("upload", "you", Status::Running, 3),
        ("report", "bob", Status::Queued, 1),
    ] {
        let then = index
            .clone()
            .with_clock(Arc::new(ManualClock::new(now - minutes_ago * 60_000)));
        let item = NewItem {
            key: key.into(),
            title: format!("{key} of {who}"),
            status: Some(status),
            ..NewItem::default()
        };
        let producer = Producer {
            user: UserId::parse(who).unwrap(),
            name: who.to_uppercase(),
        };
        then.register(&ws, &item, &producer).await.unwrap();
    }
    (dir, url)
}

#[tokio::test]
async fn prune_dry_run_on_the_demo_store_says_what_and_why_and_deletes_nothing() {
    let (dir, url) = demo_store().await;
    let before = file_count(dir.path());

    let ran = cli::pickup(&["prune", "--all", "--dry-run", "--store", &url]).await;
    let stdout = ran.stdout();
    assert!(ran.exited(0), "{stdout}{:?}", ran.code);
    assert!(stdout.contains("would delete ws/demo/markers/"), "{stdout}");
    assert!(stdout.contains("superseded by the newer run"), "{stdout}");
    assert_eq!(file_count(dir.path()), before, "a dry run deletes nothing");

    let ran = cli::pickup(&["prune", "--ws", "demo", "--store", &url]).await;
    assert!(ran.exited(0), "{:?}", ran.code);
    let stdout = ran.stdout();
    assert!(
        stdout.contains("deleted 1 markers, 1 records, 0 dismissals, 1 owner markers"),
        "counts per kind: {stdout}"
    );
    assert_eq!(
        file_count(dir.path()),
        before - 3,
        "the real run deletes the superseded marker, its record and its owner marker"
    );
}

#[tokio::test]
async fn token_prints_the_jwt_alone() {
    let secret = "x".repeat(32);
    let args = [
        "token",
        "--sub",
        "alice",
        "--ws",
        "acme,beta",
        "--write",
        "--secret",
        &secret,
    ];
    let ran = cli::pickup(&args).await;
    assert!(ran.exited(0), "{:?}", ran.code);
    let stdout = ran.stdout();
    let token = stdout.trim_end_matches('\n');
    assert_eq!(token.split('.').count(), 3, "{stdout:?}");
    assert!(!token.contains(char::is_whitespace));
}

/// A mistake in a command's settings is said, with what to fix, before anything starts.
#[tokio::test]
async fn start_up_errors_say_what_to_fix() {
    let store = tempfile::tempdir().unwrap();
    let store = format!("file://{}", store.path().display());
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = taken.local_addr().unwrap().to_string();
    let secret = "s".repeat(32);
    let cases: [(&[&str], &str); 4] = [
        (
            &["token", "--sub", "a", "--ws", "acme", "--secret", "short"],
            "at least 32 bytes",
        ),
        (&["serve", "--store", &store], "PICKUP_SECRET is not set"),
        (
            &["serve", "--store", "nonsense", "--secret", &secret],
            "is not a URL",
        ),
        (
            &[
                "serve", "--addr", &taken, "--store", &store, "--secret", &secret,
            ],
            "already in use",
        ),
    ];
    for (args, says) in cases {
        let ran = cli::pickup(args).await;
        let said = ran.refusal();
        assert!(said.contains(says), "{args:?}: {said}");
    }
}

/// Start-up refuses these before it listens: a clear error naming the value, no panic.
#[test]
fn bad_serve_settings_are_refused_before_listening() {
    let cases: &[(&str, &str, &str)] = &[
        ("--max-connections", "0", "max-connections"),
        (
            "--frame-ancestors",
            "'self'; script-src *",
            "PICKUP_FRAME_ANCESTORS",
        ),
        ("--allowed-origins", "*", "may not be \"*\""),
        ("--allowed-origins", "http://a.test, *", "may not be \"*\""),
        (
            "--allowed-origins",
            "http://a.test, https://b.test/app",
            "\"https://b.test/app\" is not an origin",
        ),
        ("--allowed-origins", "a.test", "\"a.test\" is not an origin"),
    ];
    for &(flag, value, says) in cases {
        let said = Serving::new(&[flag, value]).refused();
        assert!(said.contains(says), "{flag} {value}: {said}");
        assert!(!said.contains("panicked"), "{flag} {value}: {said}");
    }
}

/// A store an older Pickup wrote (kind first: `markers/{ws}/{id}`, `items/{ws}/{id}.json`,
/// `owners/{ws}/{user}/{id}`) keeps its items: `pickup serve` moves them to `ws/{ws}/…`
/// before it answers, and lists the same cards as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_moves_a_store_of_the_old_layout_and_lists_the_same_cards() {
    let (dir, url) = demo_store().await;
    let ids = |page: &serde_json::Value| -> Vec<String> {
        let cards = page["cards"].as_array().unwrap();
        cards
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_string())
            .collect()
    };
    let viewer = token("demo-viewer", "demo", false);
    let mut first = Serving::new(&[]).store(&url).start();
    let before = ids(&first.client().page(&viewer, "demo", "cap=50").await.value());
    first.stop().await;
    assert!(!before.is_empty());

    to_old_layout(dir.path());
    let new_root = dir.path().join("ws");
    std::fs::remove_dir_all(&new_root).unwrap();

    let mut upgraded = Serving::new(&[]).store(&url).start();
    let after = ids(&upgraded
        .client()
        .page(&viewer, "demo", "cap=50")
        .await
        .value());
    upgraded.stop().await;
    assert_eq!(after, before, "the same cards after the move");
    let left: Vec<_> = common::server::walk(dir.path())
        .into_iter()
        .filter(|f| !f.starts_with(&new_root))
        .collect();
    assert!(left.is_empty(), "old keys left behind: {left:?}");
}

/// Back to the old layout: `ws/demo/{kind}/{rest}` becomes `{kind}/demo/{rest}` (the viewers'
/// looks, which no old layout had, live apart under `looked/`).
fn to_old_layout(dir: &std::path::Path) {
    let new_root = dir.join("ws");
    for file in common::server::walk(&new_root) {
        let rel = file.strip_prefix(&new_root).unwrap();
        let mut parts = rel.iter();
        let (ws, kind) = (parts.next().unwrap(), parts.next().unwrap());
        let old = dir.join(kind).join(ws).join(parts.as_path());
        std::fs::create_dir_all(old.parent().unwrap()).unwrap();
        std::fs::rename(&file, &old).unwrap();
    }
}

/// A dry run on a store of the old layout lists the moves a real run makes first, then what
/// the real run's sweep deletes after them: the same keys, for the same reasons, and never a
/// viewer's look at a workspace whose items are still under their old names.
#[tokio::test]
async fn prune_dry_run_on_the_old_layout_says_what_a_real_run_does() {
    let (dir, url) = demo_store().await;
    let index = Index::open(&url, Limits::default(), 8, Arc::new(SystemClock)).unwrap();
    let ws = Workspace::parse("demo").unwrap();
    let viewer = UserId::parse("ada").unwrap();
    index.look(&ws, &viewer, chrono::Utc::now()).await.unwrap();
    let look = dir.path().join("looked/demo/ada");
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&look)
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
    to_old_layout(dir.path());
    let before = file_count(dir.path());

    let dry = cli::pickup(&["prune", "--all", "--dry-run", "--store", &url]).await;
    let said = dry.stdout();
    assert!(dry.exited(0), "{said}");
    assert_eq!(
        file_count(dir.path()),
        before,
        "a dry run moves and deletes nothing"
    );
    assert!(
        said.contains("would move 12 keys of the old layout"),
        "{said}"
    );
    assert!(said.contains("  would move markers/demo/"), "{said}");
    assert!(!said.contains("looked"), "the look is kept: {said}");

    let real = cli::pickup(&["prune", "--all", "--store", &url]).await;
    let done = real.stdout();
    assert!(real.exited(0), "{done}");
    assert!(look.exists(), "the real run kept the look");
    let deletes = |out: &str, verb: &str| -> Vec<String> {
        out.lines()
            .filter_map(|l| l.strip_prefix(&format!("  {verb} ")))
            .map(str::to_string)
            .collect()
    };
    let planned = deletes(&said, "would delete");
    assert!(
        planned
            .iter()
            .any(|l| l.contains("superseded by the newer run")),
        "the superseded run of the old layout is judged: {said}"
    );
    assert_eq!(planned, deletes(&done, "deleted"), "{said}\n{done}");
}

/// `pickup serve` is told to stop by SIGTERM (an orchestrator) or SIGINT (Ctrl-C): it ends its
/// streams, finishes what is in flight and exits 0 (what it finishes is `App::serve`'s, which
/// the tests of the shutdown drive in this process).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_stops_on_sigterm_and_sigint_and_exits_0() {
    for signal in ["-TERM", "-INT"] {
        let mut s = common::server::Server::start(&[]);
        let viewer = common::server::token(common::server::SECRET, "ada", "acme", false);
        let mut events = common::stream::Events::open(&s.url, "acme", &viewer).await;
        assert_eq!(events.page().await, vec![]);
        let status = Command::new("kill")
            .args([signal, &s.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let (event, _) = events.next().await.expect("a closing event");
        assert_eq!(event, LiveEvent::Reconnect.as_str(), "{signal}");
        let exited = tokio::task::spawn_blocking(move || s.child.wait().unwrap())
            .await
            .unwrap();
        assert!(exited.success(), "{signal}: {exited:?}");
    }
}
