//! Writes that outlive their caller, and shutdown's drain of them: a registration held at its
//! marker's put (between its owner marker and its marker) by the fault layer between the index
//! and its store ([`Index::through`]), on memory and on the local file system. These were
//! scenarios of `tests/scenarios/faults.rs`, which cannot reach the service from outside the
//! crate.

use super::pickup::Drained;
use super::Pickup;
use crate::auth::{Auth, Write};
use crate::index::{Index, Limits, ManualClock};
use crate::testing::fault::{FaultStore, Held, Op};
use app::contract::{NewItem, Status};
use futures::TryStreamExt;
use object_store::path::Path;
use object_store::ObjectStore;
use std::sync::Arc;
use std::time::Duration;

/// 2027-01-15, so ids are realistic.
const T0: u64 = 1_800_000_000_000;

/// The stores both tests run on, as `PICKUP_STORE` names them (a directory kept alive with it).
fn stores() -> Vec<(String, Option<tempfile::TempDir>)> {
    let dir = tempfile::tempdir().unwrap();
    let file = format!("file://{}", dir.path().display());
    vec![("memory://".into(), None), (file, Some(dir))]
}

/// A registration whose caller went away once it reached the workspace's marker, which the
/// returned door holds until the test releases it (the client hung up, or the request timed
/// out); also the object store under the door.
async fn a_registration_held_at_its_marker(url: &str) -> (Pickup, Arc<Held>, Arc<dyn ObjectStore>) {
    let clock = ManualClock::new(T0);
    let (mut faults, mut raw) = (None, None);
    let index = Index::open(url, Limits::default(), 8, Arc::new(clock))
        .unwrap()
        .with_retry(3, Duration::from_millis(1), Duration::from_millis(5))
        .through(|inner| {
            raw = Some(inner.clone());
            let layer = Arc::new(FaultStore::new(inner));
            faults = Some(layer.clone());
            layer
        });
    let (faults, raw) = (faults.unwrap(), raw.unwrap());
    let auth = Auth::new(&[7u8; 32]).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let token = auth.mint("a", None, &["acme".into()], true, HOUR, now);
    let pickup = Pickup::new(index, auth);
    let door = faults.hold(Op::Put, "ws/*/markers/");
    let who = pickup
        .auth()
        .authorize::<Write>(Some(&token), "acme")
        .await
        .unwrap();
    let item = NewItem {
        key: "k".into(),
        title: "item k".into(),
        status: Some(Status::Running),
        ..Default::default()
    };
    let register = pickup.register(&who, item);
    tokio::select! {
        _ = register => panic!("{url}: the marker's write is held, so register cannot end"),
        () = door.reached.notified() => {}
    }
    (pickup, door, raw)
}

/// How many objects `raw` holds under `dir`.
async fn count(raw: &Arc<dyn ObjectStore>, dir: &str) -> usize {
    let listed: Vec<_> = raw
        .list(Some(&Path::from(dir)))
        .try_collect()
        .await
        .unwrap();
    listed.len()
}

/// A caller that goes away mid-registration does not cut the write half-way: the record, the
/// owner's marker and the workspace's marker are all written, so the item is not one that
/// "Mine" shows and the workspace never lists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_outlives_its_caller() {
    for (url, _dir) in stores() {
        let (pickup, door, raw) = a_registration_held_at_its_marker(&url).await;
        door.release();
        pickup.finish_writes().await;
        assert_eq!(
            count(&raw, "ws/acme/markers").await,
            1,
            "{url}: the registration went on without its caller and wrote the marker"
        );
        assert_eq!(
            count(&raw, "ws/acme/items").await,
            1,
            "{url}: and its one record"
        );
    }
}

/// At shutdown, a write still running when the connections' deadline is over is let finish
/// (until a later deadline of its own): cut there, the runtime would drop it half-way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_a_running_write_finish_after_the_connections_deadline() {
    for (url, _dir) in stores() {
        let (pickup, door, raw) = a_registration_held_at_its_marker(&url).await;
        // The connections' deadline is already over; the writes have a minute more.
        let now = tokio::time::Instant::now();
        let drain = pickup.drain(now, now + Duration::from_secs(60));
        tokio::pin!(drain);
        assert!(
            tokio::time::timeout(Duration::from_millis(200), &mut drain)
                .await
                .is_err(),
            "{url}: shutdown must wait for the held write, not end at the connections' deadline"
        );
        door.release();
        assert_eq!(
            drain.await,
            Drained {
                writes: true,
                deletes: true
            },
            "{url}"
        );
        assert_eq!(count(&raw, "ws/acme/markers").await, 1, "{url}");
    }
}

const HOUR: Duration = Duration::from_secs(3_600);
