//! Redis as deployments have it: TLS and a password, a password alone, a start that waits for
//! the bus (or says why not), and a server joining peers that published before it.

use super::*;

/// A managed Redis: TLS only (`rediss://`, a certificate of a private CA given by
/// PICKUP_BUS_CA) and a password. Facts travel; the password is printed nowhere; a wrong
/// password is said at `warn`, with its reason, and the server polls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_with_tls_and_a_password_carries_facts() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certificates::make(dir.path());
    let redis = Redis::with_tls(&certs, "s3cret-pass");
    let ca = certs.ca.display().to_string();
    let (a, b) = servers(
        &redis,
        &[
            ("PICKUP_BUS_CA", ca.as_str()),
            ("PICKUP_LIVE_EVERY", "1h"),
            ("PICKUP_RECONCILE_EVERY", "1h"),
        ],
    );
    wait_for_mode(&a, "facts on the bus").await;
    wait_for_mode(&b, "facts on the bus").await;
    let alice = token("alice", "acme", true, "1h");
    let mut on_b = Viewer::open(&b, "bob").await;
    let id = a.client().register(&alice, "acme", "over-tls").await.id;
    on_b.until("a fact over TLS", |cards| cards.iter().any(|c| c.0 == id))
        .await;

    // The wrong password: refused, said at warn with the reason, never printed.
    let wrong = redis.url.replace("s3cret-pass", "wrong-pass");
    let c = server(&[
        ("PICKUP_BUS", wrong.as_str()),
        ("PICKUP_BUS_CA", ca.as_str()),
    ])
    .log_filter("warn")
    .start();
    eventually("a warning", async || match c.log() {
        log if log.contains("bus: cannot") => Ok(()),
        log => Err(log),
    })
    .await;
    let log = c.log();
    assert!(log.contains("WARN"), "{log}");
    assert!(
        log.to_lowercase().contains("auth") || log.contains("WRONGPASS"),
        "the reason: {log}"
    );
    assert!(
        readyz(&c).await.contains("the bus is down"),
        "{}",
        readyz(&c).await
    );
    for s in [&a, &b, &c] {
        assert!(!s.log().contains("s3cret-pass"), "{}: {}", s.url, s.log());
        assert!(!s.log().contains("wrong-pass"), "{}: {}", s.url, s.log());
    }
}

/// A Redis with a password (`requirepass`), as most managed ones have, over plain TCP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_with_a_password_carries_facts() {
    let redis = Redis::with_password("pass-word");
    let (a, b) = servers(
        &redis,
        &[
            ("PICKUP_LIVE_EVERY", "1h"),
            ("PICKUP_RECONCILE_EVERY", "1h"),
        ],
    );
    wait_for_mode(&a, "facts on the bus").await;
    wait_for_mode(&b, "facts on the bus").await;
    let alice = token("alice", "acme", true, "1h");
    let mut on_b = Viewer::open(&b, "bob").await;
    let id = a
        .client()
        .register(&alice, "acme", "with-password")
        .await
        .id;
    on_b.until("a fact", |cards| cards.iter().any(|c| c.0 == id))
        .await;
}

/// A bus without a key to seal facts with is refused at start, with what to set.
#[test]
fn a_bus_without_a_key_is_refused_at_start() {
    let err = server(&[
        ("PICKUP_JWKS_URL", "http://127.0.0.1:9/certs"),
        ("PICKUP_BUS", "redis://:hunter2@127.0.0.1:9"),
    ])
    .without_secret()
    .refused();
    assert!(err.contains("PICKUP_BUS_KEY"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
}

/// A server listens once facts on the bus drive its watchers: the streams a restart brings
/// back at once start on facts, not polling the store until the bus is up and then each
/// reconciling in full. A bus that does not answer holds the start only a few seconds: the
/// server then listens all the same, says so, and polls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_listens_once_on_the_bus_or_says_why_not() {
    let redis = Redis::start();
    let env = [("PICKUP_BUS", redis.url.as_str())];
    let a = server(&env).log_filter("warn").start();
    // Listening means on the bus: the first answer says so, no waiting.
    assert!(
        readyz(&a).await.contains("facts on the bus"),
        "{}",
        readyz(&a).await
    );
    let mut viewer = Viewer::open(&a, "bob").await;
    viewer.agrees_with(&a, "a stream opened at once").await;
    let reconciles = |why| metric(&a, "pickup_live_reconciles_total", why);
    assert_eq!(
        reconciles("why=\"start\"").await,
        1.0,
        "the watcher's start"
    );
    assert_eq!(
        reconciles("why=\"doubt\"").await,
        0.0,
        "no reconcile for a bus that came up late"
    );
    assert_eq!(
        reconciles("why=\"poll\"").await,
        0.0,
        "no polling before it did"
    );

    // A Redis that accepts the connection and never answers: the start waits, then goes on.
    redis.pause();
    let b = server(&env).log_filter("warn").start();
    let log = b.log();
    assert!(log.contains("the bus is not up"), "{log}");
    assert!(
        readyz(&b).await.contains("the bus is down"),
        "{}",
        readyz(&b).await
    );
    redis.resume();
    wait_for_mode(&b, "facts on the bus").await;
}

/// A server joining a bus whose peers have published before (a restart, a scale-out) has missed
/// nothing of that: it is in the store its watchers list. Their first beats are no gap, and do
/// not make every watcher reconcile in full a second time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn joining_a_bus_whose_peers_published_before_is_no_gap() {
    let redis = Redis::start();
    let env = [
        ("PICKUP_BUS", redis.url.as_str()),
        ("PICKUP_RECONCILE_EVERY", "1h"),
    ];
    let a = server(&env).start();
    wait_for_mode(&a, "facts on the bus").await;
    let writer = token("ada", "acme", true, "1h");
    for key in ["one", "two", "three"] {
        a.client().register(&writer, "acme", key).await;
    }
    let b = server(&env).store(&a.store_url()).start();
    let mut viewer = Viewer::open(&b, "bob").await;
    viewer.agrees_with(&b, "the items A registered").await;
    // Until B has heard A (a beat, numbered past A's three facts).
    eventually("B hears A", async || {
        let text = metrics_text(&b).await;
        match text.lines().find(|l| l.starts_with("pickup_bus_peers ")) {
            Some(l) if l.ends_with(" 1") => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    assert_eq!(
        metric(&b, "pickup_bus_facts_total", "dir=\"gap\"").await,
        0.0
    );
    let doubts = metric(&b, "pickup_live_reconciles_total", "why=\"doubt\"").await;
    assert_eq!(doubts, 0.0, "no watcher reconciled again");
    // A fact after joining still reaches B's viewer.
    a.client().register(&writer, "acme", "four").await;
    viewer
        .agrees_with(&b, "an item A registered after B joined")
        .await;
}
