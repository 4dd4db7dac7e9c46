//! A TCP proxy on 127.0.0.1 in front of an emulator that writes down each exchange: the
//! request's first line and the status the store answered. With one request per connection
//! (`*_POOL_MAX_IDLE_PER_HOST=0`), it shows every request object_store sent, retries included.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// One request and its answer: `status` is `None` when no answer came back.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub request: String,
    pub status: Option<u16>,
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
    log: Mutex<Vec<Exchange>>,
    ended: Notify,
}

impl Recorder {
    /// Every exchange, once each connection accepted so far has ended (call it after the
    /// client is gone: its connections then end as soon as the store's side closes).
    pub async fn exchanges(&self) -> Vec<Exchange> {
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
            let (upstream, rec) = (upstream.clone(), rec.clone());
            tokio::spawn(async move {
                let exchange = match TcpStream::connect(&upstream).await {
                    Ok(server) => relay(client, server).await,
                    Err(e) => Exchange {
                        request: format!("(not forwarded: {e})"),
                        status: None,
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
async fn relay(client: TcpStream, server: TcpStream) -> Exchange {
    let (client_rx, mut client_tx) = client.into_split();
    let (server_rx, mut server_tx) = server.into_split();
    let mut client_rx = BufReader::new(client_rx);
    let mut server_rx = BufReader::new(server_rx);
    let request = first_line(&mut client_rx).await.unwrap_or_default();
    let _ = server_tx.write_all(request.as_bytes()).await;
    let forward = tokio::spawn(async move {
        let _ = tokio::io::copy_buf(&mut client_rx, &mut server_tx).await;
    });
    let answer = first_line(&mut server_rx).await;
    if let Some(line) = &answer {
        let _ = client_tx.write_all(line.as_bytes()).await;
        let _ = tokio::io::copy_buf(&mut server_rx, &mut client_tx).await;
    }
    forward.abort();
    // "HTTP/1.1 404 The specified container does not exist."
    let status = answer.and_then(|l| l.split_whitespace().nth(1)?.parse().ok());
    Exchange {
        request: request.trim_end().to_string(),
        status,
    }
}

async fn first_line(from: &mut (impl AsyncRead + Unpin + AsyncBufReadExt)) -> Option<String> {
    let mut line = String::new();
    match from.read_line(&mut line).await {
        Ok(n) if n > 0 => Some(line),
        _ => None,
    }
}
