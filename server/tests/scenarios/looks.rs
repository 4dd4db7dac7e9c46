//! "Since you looked": a viewer's last look at a workspace, one small object under the viewer's
//! own key (`looked/{ws}/{user}`, apart from the workspace's items), written with one plain put
//! and read with one get, and deleted by the janitor only once the workspace has no item left.

use crate::common::backends::Backend;
use crate::common::fault::Op;
use crate::common::raw::{path, Raw};
use crate::common::*;
use crate::support::*;
use app::contract::{LastLook, Status};
use chrono::{DateTime, SecondsFormat, Utc};
use pickup::index::{Key, KeyKind, ManualClock, Reason};

/// The time `ms` (since the epoch) as a look keeps it.
fn at(ms: u64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms as i64).unwrap()
}

/// A look at `at`, as the index answers it (RFC 3339, to the millisecond, in UTC).
fn look(at: DateTime<Utc>) -> LastLook {
    LastLook {
        at: Some(at.to_rfc3339_opts(SecondsFormat::Millis, true)),
    }
}

/// No look.
fn none() -> LastLook {
    LastLook { at: None }
}

fn look_key(who: &str) -> Key {
    Key::Look(ws(), user(who))
}

/// Every object's path of workspace `acme` (under `ws/acme/` and `looked/acme/`), sorted.
async fn everything(store: &Raw) -> Vec<String> {
    let mut all = store.paths("ws/acme").await;
    all.extend(store.paths("looked/acme").await);
    all.sort();
    all
}

/// A look is written under the viewer's own key and nowhere else, with one put and no read;
/// reading it is one get. Two viewers' looks are apart; a later look replaces an earlier one;
/// a look in the future is kept as now. A look stays while the workspace has an item, and goes
/// with the workspace: once it is empty and the look is past the grace period (plus the skew,
/// its age being the store's last-modified time), never before.
pub async fn per_viewer_and_pruned_with_the_workspace(b: &Backend) {
    // Judged by the store's last-modified times: the clock starts at the real time.
    let start = Utc::now().timestamp_millis() as u64;
    let clock = ManualClock::new(start);
    let (index, faults, store) = open_faulty(b, &clock);
    let item = reg(&index, "a", Status::Running, "a").await;
    let before = everything(&store).await;
    assert_eq!(before.len(), 3, "{}: {before:?}", b.name);

    // Alice looks: one put, of her own key; nothing read, listed or deleted.
    faults.forget_calls();
    let first = at(start - 60_000);
    let kept = index.look(&ws(), &alice(), first).await.unwrap();
    assert_eq!(kept, look(first), "{}", b.name);
    let look_path = path(&look_key("alice"));
    assert_eq!(
        faults.calls_of(Op::Put),
        vec![look_path.clone()],
        "{}",
        b.name
    );
    for op in [Op::Get, Op::List, Op::Delete] {
        assert_eq!(
            faults.calls_of(op),
            Vec::<String>::new(),
            "{}: {op:?}",
            b.name
        );
    }
    let mut want = before.clone();
    want.push(look_path.clone());
    want.sort();
    assert_eq!(everything(&store).await, want, "{}", b.name);

    // Reading it back: one get of that key.
    faults.forget_calls();
    assert_eq!(
        index.looked(&ws(), &alice()).await.unwrap(),
        look(first),
        "{}",
        b.name
    );
    assert_eq!(
        faults.calls_of(Op::Get),
        vec![look_path.clone()],
        "{}",
        b.name
    );
    assert!(faults.calls_of(Op::Put).is_empty(), "{}", b.name);

    // Bob has none until he looks; then each has their own.
    assert_eq!(index.looked(&ws(), &user("bob")).await.unwrap(), none());
    let bobs = at(start - 30_000);
    index.look(&ws(), &user("bob"), bobs).await.unwrap();
    assert_eq!(index.looked(&ws(), &alice()).await.unwrap(), look(first));
    assert_eq!(index.looked(&ws(), &user("bob")).await.unwrap(), look(bobs));

    // A later look replaces the earlier; a look in the future is kept as the clock's now.
    let later = at(start - 1_000);
    index.look(&ws(), &alice(), later).await.unwrap();
    assert_eq!(index.looked(&ws(), &alice()).await.unwrap(), look(later));
    let kept = index
        .look(&ws(), &alice(), at(start + 3_600_000))
        .await
        .unwrap();
    assert_eq!(kept, look(at(start)), "{}", b.name);
    assert_eq!(
        index.looked(&ws(), &alice()).await.unwrap(),
        look(at(start))
    );
    assert_eq!(index.looked(&ws(), &user("bob")).await.unwrap(), look(bobs));

    // The item's keys are as they were; only the two looks were added.
    let mut want = before.clone();
    want.extend([look_path.clone(), path(&look_key("bob"))]);
    want.sort();
    assert_eq!(everything(&store).await, want, "{}", b.name);

    // Past the grace period, a workspace with an item keeps every look.
    let limits = index.limits();
    let past = limits.grace_ms + limits.max_skew_ms + 60_000;
    let later_clock = ManualClock::new(start + past);
    let later_index = index.clone().with_clock(std::sync::Arc::new(later_clock));
    let sweep = later_index.sweep(&ws(), true).await.unwrap();
    assert!(
        !sweep.deletes.iter().any(|(_, r)| *r == Reason::OrphanLook),
        "{}: {:?}",
        b.name,
        sweep.deletes
    );
    assert_eq!(sweep.listed.get(&pickup::index::KeyKind::Look), Some(&2));

    // The item goes: the workspace is empty but for the looks, which are young: kept.
    let id = id_of(&item.id);
    index.remove(&ws(), &id, &user("a")).await.unwrap();
    let sweep = index.sweep(&ws(), false).await.unwrap();
    assert_eq!(sweep.deletes, vec![], "{}", b.name);
    clock.advance(limits.grace_ms + limits.max_skew_ms - 30_000);
    let sweep = index.sweep(&ws(), false).await.unwrap();
    assert_eq!(sweep.deletes, vec![], "{}: not before", b.name);
    assert_eq!(everything(&store).await.len(), 2, "{}", b.name);

    // Past the grace period and the skew: both go, and nothing else was there to go.
    clock.advance(90_000);
    faults.forget_calls();
    let sweep = index.sweep(&ws(), false).await.unwrap();
    assert_eq!(
        sweep.deletes,
        vec![
            (look_key("alice"), Reason::OrphanLook),
            (look_key("bob"), Reason::OrphanLook),
        ],
        "{}",
        b.name
    );
    assert_eq!(
        sweep.deleted.get(&pickup::index::KeyKind::Look),
        Some(&2),
        "{}",
        b.name
    );
    assert_eq!(everything(&store).await, Vec::<String>::new(), "{}", b.name);
    assert_eq!(index.looked(&ws(), &alice()).await.unwrap(), none());
}

/// A look that cannot be read is an error, never "never looked": a failed get, and an object
/// there that is not a look.
pub async fn errors_are_never_none(b: &Backend) {
    let clock = ManualClock::new(T0);
    let (index, faults, store) = open_faulty(b, &clock);
    index.look(&ws(), &alice(), at(T0)).await.unwrap();
    faults.fail(Op::Get, "looked/acme/");
    assert!(index.looked(&ws(), &alice()).await.is_err(), "{}", b.name);
    faults.fail(Op::Put, "looked/acme/");
    assert!(index.look(&ws(), &alice(), at(T0)).await.is_err());
    faults.heal();
    store
        .put(&path(&look_key("alice")), "{\"at\":\"last tuesday\"}")
        .await;
    let read = index.looked(&ws(), &alice()).await;
    // Not what Pickup writes there: the store's `Unreadable`, which the index's face tells by
    // `is_unreadable_object` (and names in its Debug form; `StoreError` is the store's own).
    assert!(
        matches!(&read, Err(e) if e.is_unreadable_object()
            && format!("{e:?}").starts_with("Store(Unreadable {")),
        "{}: {read:?}",
        b.name
    );
}

/// Looks first kept under the workspace's prefix (`ws/{ws}/looked/{user}`, which every live
/// reconcile listed) are moved by the janitor's sweep to their name now, before it judges them;
/// a viewer who has both (a look written since the upgrade) keeps the later; a dry run says
/// how many it would move and moves nothing.
pub async fn first_names_are_moved_by_the_janitor(b: &Backend) {
    let start = Utc::now().timestamp_millis() as u64;
    let clock = ManualClock::new(start);
    let (index, _faults, store) = open_faulty(b, &clock);
    reg(&index, "a", Status::Running, "a").await;
    let body = |ms: u64| {
        let at = at(ms).to_rfc3339_opts(SecondsFormat::Millis, true);
        format!("{{\"at\":\"{at}\"}}")
    };
    // Alice's only under the first name; Bob's later there, Carol's later under the new one.
    store.put("ws/acme/looked/alice", body(start - 3_000)).await;
    store.put("ws/acme/looked/bob", body(start - 1_000)).await;
    store.put("ws/acme/looked/carol", body(start - 2_000)).await;
    index
        .look(&ws(), &user("bob"), at(start - 2_000))
        .await
        .unwrap();
    index
        .look(&ws(), &user("carol"), at(start - 1_000))
        .await
        .unwrap();
    assert_eq!(index.looked(&ws(), &alice()).await.unwrap(), none());

    let dry = index.sweep(&ws(), true).await.unwrap();
    assert_eq!(dry.moved_looks, 3, "{}", b.name);
    assert_eq!(dry.listed.get(&KeyKind::Look), Some(&3), "{}", b.name);
    assert_eq!(store.paths("ws/acme/looked").await.len(), 3, "{}", b.name);

    let real = index.sweep(&ws(), false).await.unwrap();
    assert_eq!(real.moved_looks, 3, "{}", b.name);
    assert_eq!(real.listed.get(&KeyKind::Look), Some(&3), "{}", b.name);
    assert_eq!(real.deletes, vec![], "{}", b.name);
    let first: Vec<String> = store.paths("ws/acme/looked").await;
    assert_eq!(first, Vec::<String>::new(), "{}", b.name);
    for (who, ms) in [
        ("alice", start - 3_000),
        ("bob", start - 1_000),
        ("carol", start - 1_000),
    ] {
        let kept = index.looked(&ws(), &user(who)).await.unwrap();
        assert_eq!(kept, look(at(ms)), "{}: {who}", b.name);
    }
    let again = index.sweep(&ws(), false).await.unwrap();
    assert_eq!(again.moved_looks, 0, "{}", b.name);
}
