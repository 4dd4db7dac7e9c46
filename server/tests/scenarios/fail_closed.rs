//! Errors are never "empty": a listing that fails is an error for the caller and deletes nothing.

use crate::common::backends::{unique, Backend};
use crate::common::fault::Op;
use crate::common::*;
use crate::support::*;
use app::contract::{Filter, Status};
use pickup::index::ManualClock;

/// A listing error (injected through the fault layer, on every backend) fails a read and a
/// sweep, and nothing is deleted on its strength. On the clouds, also a bucket or container that
/// does not exist (memory has none; a missing directory is created by `Index::open`).
pub async fn listing_errors(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, faults, _) = open_faulty(b, &clock);
    reg(&index, "a", Status::Failed, "a").await;
    clock.advance(25 * HOUR);
    faults.fail(Op::List, "ws/*/markers");
    faults.forget_calls();
    let read = index.recent(&ws(), &alice(), Filter::All, None, None).await;
    assert!(read.is_err(), "{}: {read:?}", b.name);
    let sweep = index.sweep(&ws(), false).await;
    assert!(sweep.is_err(), "{}: {sweep:?}", b.name);
    assert!(
        faults.calls_of(Op::Delete).is_empty(),
        "{}: nothing deleted on the strength of an error",
        b.name
    );
    faults.heal();
    assert_eq!(markers(&index).await.len(), 1, "{}", b.name);

    if !b.sorted || !b.shared() {
        println!("{}: no missing bucket to test on this backend", b.name);
        return;
    }
    let scheme = b.base.split("://").next().unwrap();
    let url = format!("{scheme}://{}", unique("no-such"));
    let index = index_at(&url, &clock);
    let read = index.recent(&ws(), &alice(), Filter::All, None, None).await;
    assert!(read.is_err(), "{}: a missing bucket: {read:?}", b.name);
    assert!(index.sweep(&ws(), false).await.is_err());
}
