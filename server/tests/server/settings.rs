//! Issue 25.7: a server refuses, at start-up (before it listens), settings that can lose data, with an error
//! that names the settings and a fix; and a store that refuses is said so at once (25.2).

use crate::common;

use crate::common::in_process::Serving;
use crate::common::proxy;

/// A registration may take up to the request timeout; the janitor deletes a record without a
/// marker once older than grace + skew. 10 s + 5 s < 30 s: refused, naming all three.
#[test]
fn a_request_timeout_longer_than_grace_plus_skew_is_refused() {
    let serving = Serving::new(&[
        "--grace",
        "10s",
        "--max-skew",
        "5s",
        "--request-timeout",
        "30s",
    ]);
    let dir = tempfile::tempdir().unwrap();
    let store = format!("file://{}", dir.path().display());
    let err = serving.store(&store).refused();
    for named in [
        "PICKUP_REQUEST_TIMEOUT (30s)",
        "PICKUP_GRACE (10s)",
        "PICKUP_MAX_SKEW (5s)",
        "lower PICKUP_REQUEST_TIMEOUT to at most 15s",
    ] {
        assert!(err.contains(named), "{named:?} not in: {err}");
    }
    let written: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert!(
        written.is_empty(),
        "nothing was written before the refusal: {written:?}"
    );
}

/// A bucket (container) that does not exist is a refusal, said at start-up ("the store
/// refused: …"), never retried as a store that "did not answer". The store is reached through
/// a proxy that records each request: none is sent again once the store's refusal of it has
/// reached the server. (Not a time bound: an emulator slowed by earlier tests answers late,
/// and its 5xx, or a request that timed out, are rightly tried again.)
mod s3 {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_missing_bucket_is_refused_at_start_up() {
        super::a_missing_bucket_is_refused_at_start_up(
            "s3",
            "s3://pickup-no-such-bucket",
            "AWS_ENDPOINT",
            &["AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"],
            "AWS_POOL_MAX_IDLE_PER_HOST",
        )
        .await;
    }
}

mod azure {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_missing_bucket_is_refused_at_start_up() {
        super::a_missing_bucket_is_refused_at_start_up(
            "azure",
            "az://pickup-no-such-container",
            "AZURITE_BLOB_STORAGE_URL",
            &["AZURE_STORAGE_ENDPOINT", "AZURE_ENDPOINT"],
            "AZURE_POOL_MAX_IDLE_PER_HOST",
        )
        .await;
    }
}

/// Run where the emulators are (`make test-backends`; `make test-rust` filters these out, and a
/// plain `cargo test` prints SKIPPED).
async fn a_missing_bucket_is_refused_at_start_up(
    name: &str,
    url: &str,
    endpoint: &str,
    aliases: &[&str],
    pool: &str,
) {
    const TEST: &str = "a_missing_bucket_is_refused_at_start_up";
    if common::backends::backend(name, TEST).is_none() {
        return;
    }
    // The proxy speaks plain HTTP on loopback: an emulator's endpoint, named by this
    // variable (as scripts/emulators.sh sets it), or the test cannot stand in front.
    let at = std::env::var(endpoint).unwrap_or_default();
    if !at.starts_with("http://127.0.0.1:") {
        println!("{TEST}: SKIPPED on backend {name}: {endpoint} is not an http://127.0.0.1:PORT emulator ({at:?})");
        return;
    }
    let (proxied, recorder) = proxy::recording(proxy::upstream_of(&at)).await;
    // The endpoint, and its aliases (which name the emulator itself), are the proxy: this
    // server's own options win over the environment's. One request per connection, so the
    // proxy sees each one.
    // Azure's emulator endpoint is read by object_store from the process's environment alone
    // (AZURITE_BLOB_STORAGE_URL): that server is a process of its own.
    let err = if name == "azure" {
        refused_as_a_process(url, &[(endpoint, proxied.as_str()), (pool, "0")], aliases).await
    } else {
        let mut serving = Serving::new(&[])
            .store(url)
            .store_option(endpoint, &proxied)
            .store_option(pool, "0");
        for alias in aliases {
            serving = serving.store_option(alias, &proxied);
        }
        tokio::task::spawn_blocking(move || serving.refused())
            .await
            .unwrap()
    };
    assert!(
        err.contains("the store refused: the bucket or container does not exist"),
        "{name}: {err}"
    );
    let exchanges = recorder.exchanges().await;
    let refusals: Vec<_> = exchanges
        .iter()
        .filter(|e| matches!(e.status, Some(400..=499)))
        .filter_map(|e| Some((e, e.delivered?)))
        .collect();
    assert!(
        !refusals.is_empty(),
        "{name}: no refusal reached the server: {exchanges:#?}"
    );
    for (refused, at) in refusals {
        assert!(
            !exchanges
                .iter()
                .any(|e| e.request == refused.request && e.accepted > at),
            "{name}: a request the store refused was sent again: {exchanges:#?}"
        );
    }
}

/// `pickup serve` on `url` with `env`, which must refuse to start: its error.
async fn refused_as_a_process(url: &str, env: &[(&str, &str)], unset: &[&str]) -> String {
    let mut cmd = common::server::pickup(&["serve"], url, common::server::SECRET, env);
    cmd.env("PICKUP_ADDR", "127.0.0.1:0");
    for name in unset {
        cmd.env_remove(name);
    }
    // Bounded only to catch a server that started: object_store gives up within 3 min.
    let out = tokio::task::spawn_blocking(move || {
        use std::process::Stdio;
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(240);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                child.kill().unwrap();
                panic!("still running after 240 s: it started instead of refusing");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    assert!(!out.status.success(), "it started: {out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}
