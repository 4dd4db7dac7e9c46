//! Create-only puts and conditional updates: what the store can promise, and never a silent
//! plain write where it cannot.

use crate::common::backends::Backend;
use crate::common::raw::path;
use crate::common::*;
use crate::support::*;
use app::contract::Status;
use pickup::index::IndexError;
use pickup::index::ManualClock;

/// Create-only puts refuse a taken key everywhere. Conditional update: compare-and-set where the
/// store can (a stale or made-up ETag is 412 and writes nothing), 501 where it cannot (files).
pub async fn update(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, store) = open(b, &clock);
    let r = reg(&index, "a", Status::Running, "a").await;
    let id = id_of(&r.id);
    let again = store.create(&path(&key::item(&ws(), &id)), "{}").await;
    assert!(
        matches!(again, Err(object_store::Error::AlreadyExists { .. })),
        "{}: create-only put of a taken key: {again:?}",
        b.name
    );

    let (_, etag) = index.get(&ws(), &id).await.unwrap();
    if b.conditional {
        let etag = etag.unwrap_or_else(|| panic!("{}: the store gives ETags", b.name));
        clock.advance(1_000);
        let (rec, new_etag) = index
            .update(
                &ws(),
                &id,
                &up(Status::Running, 0.5),
                &user("a"),
                Some(etag.clone()),
            )
            .await
            .unwrap();
        assert_eq!(rec.progress, Some(0.5));
        let new_etag = new_etag.expect("an ETag for the new version");
        assert_ne!(new_etag, etag);
        for stale in [etag, "\"made-up\"".to_string()] {
            let res = index
                .update(
                    &ws(),
                    &id,
                    &up(Status::Running, 0.9),
                    &user("a"),
                    Some(stale),
                )
                .await;
            assert!(
                matches!(res, Err(IndexError::PreconditionFailed)),
                "{}: {res:?}",
                b.name
            );
        }
        let (now, etag_now) = index.get(&ws(), &id).await.unwrap();
        assert_eq!(
            now.progress,
            Some(0.5),
            "{}: the lost race wrote nothing",
            b.name
        );
        assert_eq!(etag_now, Some(new_etag.clone()));
        index
            .update(
                &ws(),
                &id,
                &up(Status::Succeeded, 1.0),
                &user("a"),
                Some(new_etag),
            )
            .await
            .unwrap();
        // Without If-Match an update is a plain write.
        index
            .update(&ws(), &id, &up(Status::Failed, 1.0), &user("a"), None)
            .await
            .unwrap();
        assert_eq!(
            index.get(&ws(), &id).await.unwrap().0.status,
            Status::Failed
        );
    } else {
        let res = index
            .update(&ws(), &id, &up(Status::Running, 0.5), &user("a"), etag)
            .await;
        assert!(
            matches!(res, Err(IndexError::NotSupported(_))),
            "{}: {res:?}",
            b.name
        );
        assert_eq!(
            index.get(&ws(), &id).await.unwrap().0.progress,
            None,
            "{}: no silent plain write",
            b.name
        );
    }
}
