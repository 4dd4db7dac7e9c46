//! The accept loop as `pickup serve` runs it (served in this process on a loopback port): the
//! header-read timeout, the request timeout, the connection cap, a shutdown that is not held
//! up and keeps every acknowledged write, and a second server on the same store.

use crate::common::client::path;
use crate::common::client::{token, TestClient};
use crate::common::in_process::Served;
use axum::http::StatusCode;
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_during_a_burst_keeps_every_acknowledged_registration() {
    let mut s = Served::start(&[]);
    let token = token("alice", "acme", true);
    let (acked_tx, mut acked_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let c = TestClient::url(&s.url);
    let mut tasks = Vec::new();
    for i in 0..300 {
        let (c, token, tx) = (c.clone(), token.clone(), acked_tx.clone());
        tasks.push(tokio::spawn(async move {
            let body = json!({"key": format!("k{i}"), "title": "t"});
            let res = c
                .post(&path::items("acme"))
                .bearer(&token)
                .json(&body)
                .try_send()
                .await;
            if let Ok(res) = res {
                if res.status == StatusCode::CREATED {
                    tx.send(res.value()["id"].as_str().unwrap().to_string())
                        .unwrap();
                }
            }
        }));
    }
    drop(acked_tx);
    // Terminate once the burst is under way (20 acknowledged), not after a sleep.
    let mut acked = Vec::new();
    while acked.len() < 20 {
        acked.push(
            acked_rx
                .recv()
                .await
                .expect("registrations were acknowledged"),
        );
    }
    s.stop().await;
    for t in tasks {
        t.await.unwrap();
    }
    while let Ok(id) = acked_rx.try_recv() {
        acked.push(id);
    }
    let root = s.dir.path();
    for id in &acked {
        assert!(
            root.join(format!("ws/acme/markers/{id}")).exists(),
            "marker of acknowledged {id}"
        );
        assert!(
            root.join(format!("ws/acme/items/{id}.json")).exists(),
            "record of acknowledged {id}"
        );
    }
    eprintln!(
        "a shutdown during a burst: {} of 300 registrations acknowledged, all present",
        acked.len()
    );
}

/// The read cache shares listings between requests, but an item registered through another
/// server reaches every request to this server that starts one cache period (250 ms) after the
/// registration was answered: well inside the widget's one second. Not a time bound: each read
/// started after that point must show it, however slow the machine.
#[tokio::test]
async fn a_new_item_reaches_readers_of_another_server_within_a_second() {
    const FRESH_FOR: Duration = Duration::from_millis(250);
    let reader = Served::start(&["--read-cache", "250ms"]);
    let writer = Served::start_on(&reader.store_url(), &[]);
    let token = token("alice", "acme", true);
    let (to_reader, to_writer) = (TestClient::url(&reader.url), TestClient::url(&writer.url));
    let recent = || async {
        let page = to_reader.recent(&token, "acme", "").await;
        page.cards.into_iter().map(|c| c.title).collect::<Vec<_>>()
    };
    to_reader.register(&token, "acme", "before").await;
    assert_eq!(
        recent().await,
        vec!["item before"],
        "the reader's cache is warm"
    );

    to_writer.register(&token, "acme", "after").await;
    let answered = tokio::time::Instant::now();
    // Reads until one starts a cache period after the answer: that one must show the item.
    loop {
        let started = tokio::time::Instant::now();
        let seen = recent().await.contains(&"item after".to_string());
        if started >= answered + FRESH_FOR {
            assert!(
                seen,
                "a read started {:?} after the registration's answer did not show it",
                started - answered
            );
            break;
        }
    }
}

/// The answer to a request sent by hand on a raw connection, read until the server closes it
/// (or `bound` passes: then `None`).
async fn read_until_closed(tcp: &mut tokio::net::TcpStream, bound: Duration) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    match tokio::time::timeout(bound, tcp.read_to_end(&mut got)).await {
        Ok(_) => Some(String::from_utf8_lossy(&got).to_string()),
        Err(_) => None,
    }
}

async fn half_sent_header(s: &Served) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let addr = s.addr();
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nX-Half: ").as_bytes())
        .await
        .unwrap();
    tcp
}

#[tokio::test]
async fn the_header_timeout_closes_a_connection_that_stalls_in_its_header() {
    let s = Served::start(&["--header-timeout", "1s"]);
    // Before connecting: the server's timer starts no earlier than the connection.
    let started = std::time::Instant::now();
    let mut tcp = half_sent_header(&s).await;
    let answer = read_until_closed(&mut tcp, Duration::from_secs(10)).await;
    assert!(
        answer.is_some(),
        "the stalled connection was still open after 10 s"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "closed before the timeout: {:?}",
        started.elapsed()
    );
    // The server still answers others.
    let c = TestClient::url(&s.url);
    assert_eq!(c.status("/healthz").await, StatusCode::OK);
}

#[tokio::test]
async fn a_half_sent_request_does_not_keep_the_server_from_stopping() {
    // The header timeout is long: only the shutdown deadline can end the stalled connection.
    let mut s = Served::start(&["--shutdown-grace", "1s", "--header-timeout", "10m"]);
    let _stalled = half_sent_header(&s).await;
    // Connections are accepted in order: once a later one is answered, the stalled one is the
    // server's.
    let c = TestClient::url(&s.url);
    assert_eq!(c.status("/healthz").await, StatusCode::OK);
    let started = std::time::Instant::now();
    tokio::time::timeout(Duration::from_secs(15), s.stop())
        .await
        .expect("the server was still running 15 s after it was told to stop");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_request_whose_body_stalls_gets_408_after_the_request_timeout() {
    use tokio::io::AsyncWriteExt;
    let s = Served::start(&["--request-timeout", "1s"]);
    let token = token("alice", "acme", true);
    let addr = s.addr();
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{{\"key\"",
        path::items("acme")
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let answer = read_until_closed(&mut tcp, Duration::from_secs(10))
        .await
        .expect("no answer within 10 s");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}

#[tokio::test]
async fn connections_over_the_cap_wait_until_one_closes() {
    use tokio::io::AsyncWriteExt;
    let s = Served::start(&["--max-connections", "1"]);
    let addr = s.addr().to_string();
    // The one slot: a kept-alive connection, answered once, then idle.
    let mut first = tokio::net::TcpStream::connect(&addr).await.unwrap();
    first
        .write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut buf = [0u8; 1024];
    let n = tokio::io::AsyncReadExt::read(&mut first, &mut buf)
        .await
        .unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    let mut waiting = tokio::spawn({
        let c = TestClient::url(&s.url);
        async move { c.get("/healthz").try_send().await.map(|r| r.status) }
    });
    // While the slot is taken the second is not served (a bound, not a sleep: it can only fail
    // if the cap is broken)...
    let early = tokio::time::timeout(Duration::from_millis(500), &mut waiting).await;
    assert!(
        early.is_err(),
        "served while the only slot was taken: {early:?}"
    );
    // ...and once the slot is free, it is.
    drop(first);
    let status = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("not served after the slot was freed")
        .unwrap()
        .unwrap();
    assert_eq!(status, StatusCode::OK);
}
