//! The `pickup` binary as scripts use it.

use crate::common;

use std::process::Command;

fn pickup() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pickup"));
    c.env_remove("PICKUP_SECRET")
        .env_remove("PICKUP_STORE")
        .env("PICKUP_LOG", "warn");
    c
}

fn file_count(dir: &std::path::Path) -> usize {
    common::server::walk(dir).len()
}

/// A file store in a fresh directory, seeded with the demo workspace, and its URL.
async fn demo_store() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.path().display());
    let store = pickup::index::Store::open(&url).unwrap();
    let index = pickup::index::Index::new(
        store,
        Default::default(),
        8,
        std::sync::Arc::new(pickup::index::SystemClock),
    );
    pickup::demo::seed(&index).await.unwrap();
    (dir, url)
}

#[tokio::test]
async fn prune_dry_run_on_the_demo_store_says_what_and_why_and_deletes_nothing() {
    let (dir, url) = demo_store().await;
    let before = file_count(dir.path());

    let out = pickup()
        .args(["prune", "--all", "--dry-run", "--store", &url])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("would delete ws/demo/markers/"), "{stdout}");
    assert!(stdout.contains("superseded by the newer run"), "{stdout}");
    assert_eq!(file_count(dir.path()), before, "a dry run deletes nothing");

    let out = pickup()
        .args(["prune", "--ws", "demo", "--store", &url])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
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

#[test]
fn token_prints_the_jwt_alone() {
    let out = pickup()
        .args(["token", "--sub", "alice", "--ws", "acme,beta", "--write"])
        .env("PICKUP_SECRET", "x".repeat(32))
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let token = stdout.trim_end_matches('\n');
    assert_eq!(token.split('.').count(), 3, "{stdout:?}");
    assert!(!token.contains(char::is_whitespace));
}

#[test]
fn start_up_errors_say_what_to_fix() {
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case; 3] = [
        (
            &["token", "--sub", "a", "--ws", "acme"],
            &[("PICKUP_SECRET", "short")],
            "at least 32 bytes",
        ),
        (&["serve"], &[], "PICKUP_SECRET is not set"),
        (
            &["serve", "--store", "nonsense"],
            &[("PICKUP_SECRET", &"s".repeat(32))],
            "is not a URL",
        ),
    ];
    for (args, env, says) in cases {
        let out = pickup()
            .args(args)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

#[test]
fn a_busy_port_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = pickup()
        .args([
            "serve",
            "--addr",
            &addr,
            "--store",
            &format!("file://{}", dir.path().display()),
        ])
        .env("PICKUP_SECRET", "s".repeat(32))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("already in use"), "{stderr}");
}

/// Start-up refuses these before it listens: a clear error naming the value, no panic.
#[test]
fn bad_serve_settings_are_refused_before_listening() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("file://{}", dir.path().display());
    let cases: &[(&str, &str, &str)] = &[
        ("PICKUP_MAX_CONNECTIONS", "0", "max-connections"),
        (
            "PICKUP_FRAME_ANCESTORS",
            "'self'; script-src *",
            "PICKUP_FRAME_ANCESTORS",
        ),
        ("PICKUP_ALLOWED_ORIGINS", "*", "may not be \"*\""),
        (
            "PICKUP_ALLOWED_ORIGINS",
            "http://a.test, *",
            "may not be \"*\"",
        ),
        (
            "PICKUP_ALLOWED_ORIGINS",
            "http://a.test, https://b.test/app",
            "\"https://b.test/app\" is not an origin",
        ),
        (
            "PICKUP_ALLOWED_ORIGINS",
            "a.test",
            "\"a.test\" is not an origin",
        ),
    ];
    for &(var, value, says) in cases {
        let mut child = pickup()
            .args(["serve", "--addr", "127.0.0.1:0", "--store", &store])
            .env("PICKUP_SECRET", "s".repeat(32))
            .env(var, value)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // A server that accepted the value would serve forever: give it a bound, then fail.
        let started = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > std::time::Duration::from_secs(20) {
                let _ = child.kill();
                panic!("{var}={value}: the server started instead of refusing it");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(!out.status.success(), "{var}={value}: {stdout}");
        assert!(stderr.contains(says), "{var}={value}: {stderr}");
        assert!(!stderr.contains("panicked"), "{var}={value}: {stderr}");
        assert!(!stdout.contains("listening"), "{var}={value}: {stdout}");
    }
}

/// A store an older Pickup wrote (kind first: `markers/{ws}/{id}`, `items/{ws}/{id}.json`,
/// `owners/{ws}/{user}/{id}`) keeps its items: `pickup serve` moves them to `ws/{ws}/…`
/// before it answers, and lists the same cards as before.
#[tokio::test]
async fn serve_moves_a_store_of_the_old_layout_and_lists_the_same_cards() {
    use common::server::{token, Server, SECRET};
    let (dir, url) = demo_store().await;
    let ids = |page: &serde_json::Value| -> Vec<String> {
        let cards = page["cards"].as_array().unwrap();
        cards
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_string())
            .collect()
    };
    let viewer = token(SECRET, "demo-viewer", "demo", false);
    let mut first = Server::start_on("new", &url, SECRET, &[]);
    let before = ids(&first.recent_page(&viewer, "demo", "cap=50").await);
    first.terminate();
    assert!(!before.is_empty());

    // Back to the old layout: `ws/demo/{kind}/{rest}` becomes `{kind}/demo/{rest}`.
    let new_root = dir.path().join("ws");
    for file in common::server::walk(&new_root) {
        let rel = file.strip_prefix(&new_root).unwrap();
        let mut parts = rel.iter();
        let (ws, kind) = (parts.next().unwrap(), parts.next().unwrap());
        let old = dir.path().join(kind).join(ws).join(parts.as_path());
        std::fs::create_dir_all(old.parent().unwrap()).unwrap();
        std::fs::rename(&file, &old).unwrap();
    }
    std::fs::remove_dir_all(&new_root).unwrap();

    let mut upgraded = Server::start_on("upgraded", &url, SECRET, &[]);
    let after = ids(&upgraded.recent_page(&viewer, "demo", "cap=50").await);
    upgraded.terminate();
    assert_eq!(after, before, "the same cards after the move");
    let left: Vec<_> = common::server::walk(dir.path())
        .into_iter()
        .filter(|f| !f.starts_with(&new_root))
        .collect();
    assert!(left.is_empty(), "old keys left behind: {left:?}");
}
