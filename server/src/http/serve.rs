//! The accept loop: HTTP/1 connections with a header-read timeout, a cap on open connections,
//! and a graceful shutdown that has a deadline. (`axum::serve` has none of the three.)
//!
//! What it guarantees:
//! - A client has [`Limits::header_read`] to send the whole header of a request, counted from
//!   the moment the server waits for it (on a new connection and between requests on a kept-alive
//!   one); then the connection is closed. So a silent or idle connection is closed after it too.
//! - At most [`Limits::max_connections`] connections are open at once. When all are taken the
//!   loop stops accepting until one closes; new clients wait in the kernel's listen backlog.
//! - On shutdown the listener is closed at once; requests in flight finish and idle connections
//!   close. Connections still open [`Limits::grace`] after the signal are dropped, and
//!   [`serve`] returns. It never waits longer than that.
//!
//! HTTP/1 only, as before (axum's `http2` feature is off). hyper-util's `auto` builder would sniff
//! for an HTTP/2 preface first, with no timeout, which would let a silent client escape the
//! header-read timeout.

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio::time::Instant;

#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Time allowed for a request's header.
    pub header_read: Duration,
    /// Open connections at most.
    pub max_connections: usize,
    /// After the shutdown signal, how long open connections may take to finish.
    pub grace: Duration,
}

/// Serve `app` on `listener` until `shutdown` resolves, then shut down as described above.
/// Returns the deadline the shutdown had, so the caller can bound its own clean-up by it.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) -> Instant {
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read);
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let graceful = GracefulShutdown::new();
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        while connections.try_join_next().is_some() {}
        let (permit, socket) = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = accept(&listener, &permits) => accepted,
        };
        let conn =
            http.serve_connection(TokioIo::new(socket), TowerToHyperService::new(app.clone()));
        let conn = graceful.watch(conn);
        connections.spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection closed with an error");
            }
            drop(permit);
        });
    }
    let deadline = Instant::now() + limits.grace;
    drop(listener);
    if tokio::time::timeout_at(deadline, graceful.shutdown())
        .await
        .is_err()
    {
        while connections.try_join_next().is_some() {}
        tracing::warn!(
            open = connections.len(),
            grace = ?limits.grace,
            "shutdown grace is over: dropping the connections still open"
        );
    }
    connections.shutdown().await;
    deadline
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
