//! The accept loop: HTTP/1 connections with a header-read timeout, a cap on open connections,
//! and a graceful shutdown that has a deadline. (`axum::serve` has none of the three.)
//!
//! What it guarantees:
//! - A client has [`ConnectionLimits::header_read`] to send the whole header of a request,
//!   counted from the moment the server waits for it (on a new connection and between requests
//!   on a kept-alive one); then the connection is closed. So a silent or idle connection is
//!   closed after it too.
//! - At most [`ConnectionLimits::max_connections`] connections are open at once. When all are
//!   taken the loop stops accepting until one closes; new clients wait in the kernel's listen
//!   backlog.
//! - On shutdown every connection the kernel has accepted already (the listen backlog) is taken
//!   and served, then the listener is closed: no client that got through the handshake is reset,
//!   and one that comes after is refused (a load balancer sends it to another server). Requests
//!   in flight finish and idle connections close. Connections still open
//!   [`ConnectionLimits::grace`] after the signal are dropped, and [`connections`] returns. It never
//!   waits longer than that.
//!
//! HTTP/1 only, as before (axum's `http2` feature is off). hyper-util's `auto` builder would sniff
//! for an HTTP/2 preface first, with no timeout, which would let a silent client escape the
//! header-read timeout.

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// What the accept loop allows a connection: its header's time, how many are open, how long
/// they may take to finish at shutdown.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionLimits {
    /// Time allowed for a request's header.
    pub header_read: Duration,
    /// Open connections at most.
    pub max_connections: usize,
    /// After the shutdown signal, how long open connections may take to finish.
    pub grace: Duration,
}

/// Serve `app` on `listener` until `shutdown` resolves, then shut down as described above.
/// Returns the deadline the shutdown had, so the caller can bound its own clean-up by it.
pub(super) async fn connections(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) -> Instant {
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read);
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let stopping = CancellationToken::new();
    let mut connections = JoinSet::new();
    let serve_one =
        |connections: &mut JoinSet<()>, socket: TcpStream, permit: Option<OwnedSemaphorePermit>| {
            let first_read = Arc::new(Notify::new());
            let io = TokioIo::new(FirstRead {
                inner: socket,
                seen: first_read.clone(),
                told: false,
            });
            let conn = http.serve_connection(io, TowerToHyperService::new(app.clone()));
            let stopping = stopping.clone();
            connections.spawn(async move {
                if let Err(e) = until_stopped(conn, stopping, first_read).await {
                    tracing::debug!(error = %e, "connection closed with an error");
                }
                drop(permit);
            });
        };
    tokio::pin!(shutdown);
    loop {
        while connections.try_join_next().is_some() {}
        let (permit, socket) = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = accept(&listener, &permits) => accepted,
        };
        serve_one(&mut connections, socket, Some(permit));
    }
    let deadline = Instant::now() + limits.grace;
    // The backlog: connections the kernel completed that nobody accepted yet. Closing the
    // listener would reset each of them, its request maybe sent already; served, each is
    // answered like any other. They pass the connection cap (they are few, and the grace
    // bounds them all).
    let backlog = drain_backlog(listener);
    if !backlog.is_empty() {
        tracing::info!(
            connections = backlog.len(),
            "shutdown: serving the connections accepted before the listener closed"
        );
    }
    for socket in backlog {
        serve_one(&mut connections, socket, None);
    }
    stopping.cancel();
    let all_done = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout_at(deadline, all_done).await.is_err() {
        tracing::warn!(
            open = connections.len(),
            grace = ?limits.grace,
            "shutdown grace is over: dropping the connections still open"
        );
    }
    connections.shutdown().await;
    deadline
}

/// Serves `conn` until it ends; once `stopping`, it finishes the request it has and closes.
/// A connection that has read nothing yet first waits for its request (`first_read`; the
/// header-read timeout bounds that): hyper's own graceful shutdown would close it unread,
/// resetting a client whose request is on its way.
async fn until_stopped<C>(
    conn: C,
    stopping: CancellationToken,
    first_read: Arc<Notify>,
) -> Result<(), hyper::Error>
where
    C: Future<Output = Result<(), hyper::Error>> + GracefulConnection,
{
    tokio::pin!(conn);
    tokio::select! {
        res = conn.as_mut() => return res,
        () = stopping.cancelled() => {}
    }
    tokio::select! {
        res = conn.as_mut() => return res,
        () = first_read.notified() => {}
    }
    conn.as_mut().graceful_shutdown();
    conn.await
}

/// A connection hyper can be asked to finish gracefully.
trait GracefulConnection {
    fn graceful_shutdown(self: std::pin::Pin<&mut Self>);
}

impl<I, S> GracefulConnection for http1::Connection<I, S>
where
    S: hyper::service::HttpService<hyper::body::Incoming>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
    S::ResBody: hyper::body::Body + 'static,
    <S::ResBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    fn graceful_shutdown(self: std::pin::Pin<&mut Self>) {
        http1::Connection::graceful_shutdown(self)
    }
}

/// A socket that tells (once, on `seen`) when the first bytes of a request were read.
struct FirstRead {
    inner: TcpStream,
    seen: Arc<Notify>,
    told: bool,
}

impl AsyncRead for FirstRead {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let res = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        if !self.told && buf.filled().len() > before {
            self.told = true;
            // A permit is kept when nobody waits yet: a later `notified` returns at once.
            self.seen.notify_one();
        }
        res
    }
}

impl AsyncWrite for FirstRead {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Every connection waiting in `listener`'s backlog, taken without waiting (`accept` until it
/// would block), and then the listener closed. Between the last `accept` and the close the
/// kernel may still complete a handshake: that window is one system call wide.
fn drain_backlog(listener: TcpListener) -> Vec<TcpStream> {
    // The std listener's `accept` asks the kernel itself; tokio's would first wait for the
    // reactor to report readiness, which it may not have seen yet.
    let listener = match listener.into_std() {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "shutdown: cannot take the listen backlog");
            return Vec::new();
        }
    };
    let mut taken = Vec::new();
    loop {
        match listener.accept() {
            Ok((socket, _)) => {
                // An accepted socket does not inherit O_NONBLOCK, which tokio needs.
                let stream = socket
                    .set_nonblocking(true)
                    .and_then(|()| TcpStream::from_std(socket));
                match stream {
                    Ok(s) => taken.push(s),
                    Err(e) => {
                        tracing::warn!(error = %e, "shutdown: cannot serve a waiting connection")
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionAborted
                        | std::io::ErrorKind::ConnectionReset
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => {
                tracing::warn!(error = %e, "shutdown: stopped taking the listen backlog");
                break;
            }
        }
    }
    taken
}

/// The next connection, once a slot is free.
async fn accept(
    listener: &TcpListener,
    permits: &Arc<Semaphore>,
) -> (OwnedSemaphorePermit, TcpStream) {
    let permit = permits
        .clone()
        .acquire_owned()
        .await
        .expect("the semaphore is never closed");
    loop {
        match listener.accept().await {
            Ok((socket, _)) => return (permit, socket),
            // The client gave up before we accepted: not our problem.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionAborted | std::io::ErrorKind::ConnectionReset
                ) => {}
            // Out of file descriptors and the like: wait instead of spinning.
            Err(e) => {
                tracing::error!(error = %e, "accept failed; trying again in 1 s");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}
