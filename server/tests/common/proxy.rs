//! A TCP proxy on 127.0.0.1 in front of an emulator that writes down each exchange: the
//! request's first line, the status the store answered, and in what order connections came
//! and answers reached the client. With one request per connection
//! (`*_POOL_MAX_IDLE_PER_HOST=0`), it shows every request object_store sent, retries included.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// One request and its answer. `accepted` and `delivered` are steps of one counter, so they
/// order events across connections.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub request: String,
    /// `None` when no answer came back.
    pub status: Option<u16>,
    /// When the connection was accepted.
    pub accepted: u64,
    /// When the answer's status line was passed to a client still waiting for it (`None`: the
    /// client had gone, as after its own timeout, or no answer came).
    pub delivered: Option<u64>,
}

/// `127.0.0.1:PORT` of an endpoint URL (`http://127.0.0.1:PORT`).
pub fn upstream_of(endpoint: &str) -> String {
    let url = url::Url::parse(endpoint).unwrap();
    format!("{}:{}", url.host_str().unwrap(), url.port().unwrap())
}

/// The exchanges a [`recording`] proxy has seen.
#[derive(Default)]
pub struct Recorder {
    accepted: AtomicUsize,
    steps: AtomicU64,
    log: Mutex<Vec<Exchange>>,
    ended: Notify,
}

impl Recorder {
    fn step(&self) -> u64 {
        self.steps.fetch_add(1, Ordering::SeqCst)
    }

    /// Every exchange, once each connection accepted so far has ended (call it after the
    /// client is gone: its connections then end as soon as the store's side closes). Panics
    /// after 30 s with what it has, should a store keep a connection open.
    pub async fn exchanges(&self) -> Vec<Exchange> {
        let all_ended = async {
            loop {
                let ended = self.ended.notified();
                {
                    let log = self.log.lock().unwrap();
                    if log.len() == self.accepted.load(Ordering::SeqCst) {
                        return log.clone();
                    }
                }
                ended.await;
            }
        };
        match tokio::time::timeout(Duration::from_secs(30), all_ended).await {
            Ok(log) => log,
            Err(_) => panic!(
                "{} connections accepted, {} ended after 30 s: {:#?}",
                self.accepted.load(Ordering::SeqCst),
                self.log.lock().unwrap().len(),
                self.log.lock().unwrap()
            ),
        }
    }
}

/// Start the proxy in front of `upstream`; its `http://` address and what it records.
pub async fn recording(upstream: String) -> (String, Arc<Recorder>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let recorder = Arc::new(Recorder::default());
    let rec = recorder.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            rec.accepted.fetch_add(1, Ordering::SeqCst);
            let accepted = rec.step();
            let (upstream, rec) = (upstream.clone(), rec.clone());
            tokio::spawn(async move {
                let exchange = match TcpStream::connect(&upstream).await {
                    Ok(server) => relay(client, server, accepted, &rec).await,
                    Err(e) => Exchange {
                        request: format!("(not forwarded: {e})"),
                        status: None,
                        accepted,
                        delivered: None,
                    },
                };
                rec.log.lock().unwrap().push(exchange);
                rec.ended.notify_waiters();
            });
        }
    });
    (addr, recorder)
}

/// Pass bytes both ways until either side closes, reading the first line of each.
async fn relay(client: TcpStream, server: TcpStream, accepted: u64, rec: &Recorder) -> Exchange {
    let (client_rx, mut client_tx) = client.into_split();
    let (server_rx, mut server_tx) = server.into_split();
    let mut client_rx = BufReader::new(client_rx);
    let mut server_rx = BufReader::new(server_rx);
    let request = first_line(&mut client_rx).await.unwrap_or_default();
    let _ = server_tx.write_all(request.as_bytes()).await;
    // Ends when the client closes its side: it no longer waits for an answer.
    let forward = tokio::spawn(async move {
        let _ = tokio::io::copy_buf(&mut client_rx, &mut server_tx).await;
    });
    let answer = first_line(&mut server_rx).await;
    let mut delivered = None;
    if let Some(line) = &answer {
        if !forward.is_finished() && client_tx.write_all(line.as_bytes()).await.is_ok() {
            delivered = Some(rec.step());
        }
        let _ = tokio::io::copy_buf(&mut server_rx, &mut client_tx).await;
    }
    forward.abort();
    // "HTTP/1.1 404 The specified container does not exist."
    let status = answer.and_then(|l| l.split_whitespace().nth(1)?.parse().ok());
    Exchange {
        request: request.trim_end().to_string(),
        status,
        accepted,
        delivered,
    }
}

async fn first_line(from: &mut (impl AsyncBufReadExt + Unpin)) -> Option<String> {
    let mut line = String::new();
    match from.read_line(&mut line).await {
        Ok(n) if n > 0 => Some(line),
        _ => None,
    }
}
