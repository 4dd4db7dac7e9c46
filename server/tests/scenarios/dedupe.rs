//! Dedupe by sub-key: of the runs of one key more than the clock skew apart, only the newest
//! is shown, and the older ones are deleted as superseded.

use crate::common::backends::Backend;
use crate::common::*;
use crate::support::*;
use app::contract::{Filter, Status};
use pickup::index::IndexError;
use pickup::index::ManualClock;
use pickup::index::Reason;

/// The older run's marker goes (and its record after it), the newest is shown.
pub async fn older_runs_are_superseded(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, _) = open(b, &clock);
    let first = reg(&index, "k", Status::Running, "a").await;
    clock.advance(3 * 60_000); // more than the clock skew apart
    let second = reg(&index, "k", Status::Running, "a").await;
    let other = reg(&index, "other", Status::Queued, "a").await;
    let read = index
        .recent(&ws(), &alice(), Filter::All, None, None)
        .await
        .unwrap();
    let mut want = vec![second.id.clone(), other.id.clone()];
    want.sort();
    assert_eq!(shown(&read.page), want, "{}", b.name);
    assert_eq!(
        read.prune.deletes,
        vec![(
            key::marker(&ws(), &id_of(&first.id)),
            Reason::Superseded(second.id.clone())
        )],
        "{}",
        b.name
    );
    index.apply(&read.prune).await;
    assert_eq!(markers(&index).await, want, "{}", b.name);
    assert!(
        matches!(
            index.get(&ws(), &id_of(&first.id)).await,
            Err(IndexError::NotFound)
        ),
        "{}: the superseded run's record went with its marker",
        b.name
    );
}
