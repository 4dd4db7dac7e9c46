//! Waiting for what a server does in its own time (a janitor's sweep, a watcher's page, a
//! metric, a log line): the one poll of the tests, with the one bound.

use std::time::{Duration, Instant};

/// Long enough for a busy machine: what has not happened by then is not going to.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// How often to look again: the server says nothing when it is done, so the test asks.
const EVERY: Duration = Duration::from_millis(50);

/// `check` until it gives `Ok`; past [`PATIENCE`], a failure naming `what` and the last `Err`
/// (what was seen instead).
pub async fn eventually<T>(what: &str, mut check: impl AsyncFnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + PATIENCE;
    loop {
        match check().await {
            Ok(done) => return done,
            Err(seen) => assert!(
                Instant::now() < deadline,
                "{what}: not within {PATIENCE:?}; {seen}"
            ),
        }
        tokio::time::sleep(EVERY).await;
    }
}
