//! The identity provider as a peer that may fail or turn hostile: unreachable at start, a
//! redirect elsewhere, a document too large to read.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_jwks_at_start_leaves_hs256_working_and_refuses_idp_tokens_with_401() {
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/certs", l.local_addr().unwrap())
    };
    let pickup = Pickup::start(&jwks_env(&closed, "1h"), true).await;
    assert_eq!(pickup.status(&pickup.hs256("alice")).await, StatusCode::OK);
    let (status, body) = pickup
        .read("acme", &Key::rsa("k1").sign(&claims("alice", false)))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(message(&body).contains("could not be fetched"), "{body}");
    // Without a secret nothing could be verified: the server says so and does not start.
    let refused = tokio::task::spawn_blocking(move || {
        in_process::Serving::new(&["--jwks-url", &closed])
            .without_secret()
            .refused()
    })
    .await
    .unwrap();
    assert!(refused.contains("PICKUP_JWKS_URL"), "{refused}");
}

/// An axum app on a free loopback port, until dropped.
async fn serve_app(app: axum::Router) -> Listening {
    Listening::start(app).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_of_the_document_is_not_followed_and_is_named() {
    // The keys are real, but served from another origin the configured one redirects to.
    let key = Key::rsa("k1");
    let (idp, elsewhere) = Idp::start(&[&key]).await;
    let to = elsewhere.clone();
    let redirecting_peer = serve_app(axum::Router::new().fallback(move || {
        let to = to.clone();
        async move {
            (
                axum::http::StatusCode::TEMPORARY_REDIRECT,
                [(axum::http::header::LOCATION, to)],
            )
        }
    }))
    .await;
    let redirecting = redirecting_peer.url.clone();
    let pickup = Pickup::start(&jwks_env(&format!("{redirecting}/certs"), "1h"), true).await;
    let (status, body) = pickup
        .read("acme", &key.sign(&claims("alice", false)))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    let why = message(&body);
    assert!(why.contains("redirected (307 Temporary Redirect)"), "{why}");
    assert!(why.contains(&elsewhere), "names where it pointed: {why}");
    assert_eq!(idp.fetches(), 0, "the other origin was never asked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_1_gib_document_is_refused_while_it_is_read() {
    use futures::StreamExt;
    const GIB: u64 = 1 << 30;
    let sent = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = sent.clone();
    // 1 GiB of spaces, chunked, made as it is sent (one 64 KiB buffer shared by every chunk).
    let peer = serve_app(axum::Router::new().fallback(move || {
        let sent = counter.clone();
        async move {
            let chunk = bytes::Bytes::from(vec![b' '; 64 * 1024]);
            let stream = futures::stream::repeat(chunk)
                .take((GIB / (64 * 1024)) as usize)
                .map(move |c| {
                    sent.fetch_add(c.len() as u64, Ordering::SeqCst);
                    Ok::<_, std::convert::Infallible>(c)
                });
            axum::body::Body::from_stream(stream)
        }
    }))
    .await;
    let url = peer.url.clone();
    // The server's own peak memory: a process of its own.
    let pickup = Pickup::process(&jwks_env(&format!("{url}/certs"), "1h")).await;
    let (status, body) = pickup
        .read("acme", &Key::rsa("k1").sign(&claims("alice", false)))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(
        message(&body).contains("larger than 1048576 bytes"),
        "{body}"
    );
    let status = std::fs::read_to_string(format!("/proc/{}/status", pickup.pid())).unwrap();
    let hwm_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    let sent = sent.load(Ordering::SeqCst);
    eprintln!("pickup serve against a 1 GiB JWKS: VmHWM {hwm_kib} KiB, {sent} bytes sent");
    assert!(hwm_kib < 128 * 1024, "peak memory {hwm_kib} KiB");
    assert!(sent < GIB / 8, "stopped reading: {sent} bytes sent");
}
