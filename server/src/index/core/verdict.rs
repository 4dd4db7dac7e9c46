//! The pure half of resolving: given what reading a marker's record returned, is the item live
//! (a card), pending (young, no record yet), dead (delete the marker), or unknown (an error:
//! never dead, never deleted)?

use super::id::ItemId;
use super::plan::Reason;
use app::contract::{Card, ItemRecord, Status};
use std::cmp::Reverse;

/// The read path's time limits, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub ttl_ms: u64,
    pub grace_ms: u64,
    pub keep_finished_ms: u64,
    pub stale_after_ms: u64,
    /// How far servers' clocks may disagree (`PICKUP_MAX_SKEW`). An id dated later than now plus
    /// this was made by no server: it is refused at the door and never counts as young.
    pub max_skew_ms: u64,
}

impl Limits {
    /// How far ahead of `now_ms` the id's creation time lies, if beyond the allowed skew.
    pub fn too_far_ahead(&self, created_ms: u64, now_ms: u64) -> Option<u64> {
        let ahead = created_ms.saturating_sub(now_ms);
        (ahead > self.max_skew_ms).then_some(ahead)
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            ttl_ms: 7 * 24 * 3_600_000,
            grace_ms: 60_000,
            keep_finished_ms: 24 * 3_600_000,
            stale_after_ms: 15 * 60_000,
            max_skew_ms: 2 * 60_000,
        }
    }
}

/// What reading `ws/{ws}/items/{id}.json` gave.
#[derive(Debug, Clone)]
pub enum RecordLookup {
    Found(bytes::Bytes),
    NotFound,
    Failed(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Live(Box<Card>),
    Pending,
    Dead(Reason),
    Unknown(String),
}

pub fn judge(id: &ItemId, lookup: RecordLookup, now_ms: u64, limits: &Limits) -> Verdict {
    let bytes = match lookup {
        RecordLookup::Failed(e) => return Verdict::Unknown(e),
        RecordLookup::NotFound => {
            // A producer writes the marker after the record, so a young marker may be waiting
            // for nothing more than that; one dated beyond the clock skew is not young, ever.
            let old = now_ms.saturating_sub(id.created_ms()) > limits.grace_ms;
            let from_the_future = limits.too_far_ahead(id.created_ms(), now_ms).is_some();
            return if old || from_the_future {
                Verdict::Dead(Reason::NoRecord)
            } else {
                Verdict::Pending
            };
        }
        RecordLookup::Found(bytes) => bytes,
    };
    let record: ItemRecord = match serde_json::from_slice(&bytes) {
        Ok(r) => r,
        Err(e) => return Verdict::Unknown(format!("record does not parse: {e}")),
    };
    if record.id != id.to_string() {
        return Verdict::Unknown(format!("record at {id} says it is {}", record.id));
    }
    let age_of = |t: chrono::DateTime<chrono::Utc>| {
        now_ms.saturating_sub(t.timestamp_millis().max(0) as u64)
    };
    if record.status.is_finished() {
        let done_at = record.finished_at.unwrap_or(record.updated_at);
        if age_of(done_at) > limits.keep_finished_ms {
            return Verdict::Dead(Reason::FinishedLongAgo);
        }
    }
    let beat = record.heartbeat_at.unwrap_or(record.updated_at);
    let stalled_at = (record.status == Status::Running && age_of(beat) > limits.stale_after_ms)
        .then(|| beat + chrono::Duration::milliseconds(limits.stale_after_ms as i64));
    Verdict::Live(Box::new(record.to_card(stalled_at)))
}

impl Limits {
    /// The first instant after `now_ms` at which [`judge`] may say otherwise of the item `id`
    /// and its `record` with no write: a running item's heartbeat going stale, a finished one
    /// passing keep-finished, the id passing the TTL. `None`: nothing ahead changes it.
    pub fn next_change_ms(&self, id: &ItemId, record: &ItemRecord, now_ms: u64) -> Option<u64> {
        next_change_ms(id, record, now_ms, self)
    }
}

fn next_change_ms(id: &ItemId, record: &ItemRecord, now_ms: u64, limits: &Limits) -> Option<u64> {
    let ms = |t: chrono::DateTime<chrono::Utc>| t.timestamp_millis().max(0) as u64;
    let expires = id.created_ms().saturating_add(limits.ttl_ms);
    let ahead = if record.status.is_finished() {
        let done_at = record.finished_at.unwrap_or(record.updated_at);
        ms(done_at).saturating_add(limits.keep_finished_ms)
    } else if record.status == Status::Running {
        let beat = record.heartbeat_at.unwrap_or(record.updated_at);
        ms(beat).saturating_add(limits.stale_after_ms)
    } else {
        u64::MAX
    };
    // `judge` says "older than": the verdict turns one millisecond after each bound.
    [expires, ahead]
        .into_iter()
        .map(|t| t.saturating_add(1))
        .filter(|&t| t > now_ms && t != u64::MAX)
        .min()
}

/// One key's runs (its newest and its rivals within the clock skew), each judged: which one is
/// shown, which markers are dead, which could not be read.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Settled {
    pub shown: Option<(ItemId, Card)>,
    pub dead: Vec<(ItemId, Reason)>,
    pub unknown: Vec<(ItemId, String)>,
}

/// Ids carry their server's clock, so among runs made within the skew the newest id is not
/// always the newest run, and which run wins never depends on id order alone. Shown: a run in
/// flight that is not stalled (the key is being worked on), else the run whose record says the
/// latest thing: a finished run's finish, a stalled run's last heartbeat; ties go to the newest
/// id. Those times are the writing server's, dated by the store's clock whenever that server's
/// clock is off it (`clock_check`). A finished run that is not shown is deleted as superseded
/// only when the shown run's last word is no earlier than its finish: a finished result is
/// never deleted in favour of an older one. Runs in flight are never deleted here.
pub(crate) fn settle(runs: Vec<(ItemId, Verdict)>) -> Settled {
    let shown_id = runs
        .iter()
        .filter_map(|(id, v)| match v {
            Verdict::Live(card) => Some((
                !card.status.is_finished() && !card.stalled,
                last_word(card),
                Reverse(id),
            )),
            _ => None,
        })
        .max()
        .map(|(_, _, Reverse(id))| id.clone());
    let shown_word = runs.iter().find_map(|(id, v)| match v {
        Verdict::Live(card) if Some(id) == shown_id.as_ref() => Some(last_word(card)),
        _ => None,
    });
    let mut settled = Settled::default();
    for (id, verdict) in runs {
        match verdict {
            Verdict::Live(card) if Some(&id) == shown_id.as_ref() => {
                settled.shown = Some((id, *card))
            }
            Verdict::Live(card)
                if card.status.is_finished()
                    && shown_word.is_some_and(|shown| shown >= last_word(&card)) =>
            {
                let newer = shown_id.as_ref().map(ItemId::to_string).unwrap_or_default();
                settled.dead.push((id, Reason::Superseded(newer)));
            }
            Verdict::Live(_) | Verdict::Pending => {}
            Verdict::Dead(reason) => settled.dead.push((id, reason)),
            Verdict::Unknown(why) => settled.unknown.push((id, why)),
        }
    }
    settled
}

/// When a run last said something, in ms: its finish, or (in flight) its last update.
fn last_word(card: &Card) -> i64 {
    let at = match (&card.finished_at, card.status.is_finished()) {
        (Some(finished), true) => finished,
        _ => &card.updated_at,
    };
    chrono::DateTime::parse_from_rfc3339(at)
        .map(|t| t.timestamp_millis())
        .unwrap_or(i64::MIN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::core::names::{SubKey, Workspace};
    use crate::index::core::record::updated_record;
    use app::contract::{ItemUpdate, Owner};

    const NOW: u64 = 1_800_000_000_000;

    fn id(created: u64) -> ItemId {
        ItemId::new(created, SubKey::parse("k").unwrap()).unwrap()
    }

    fn record(id: &ItemId, status: Status, updated_ms: u64) -> Vec<u8> {
        let up = ItemUpdate::new("t", status);
        let owner = Owner {
            sub: "a".into(),
            name: "A".into(),
        };
        let r =
            updated_record(&Workspace::parse("w").unwrap(), id, &up, owner, updated_ms).unwrap();
        serde_json::to_vec(&r).unwrap()
    }

    fn live(id: &ItemId, status: Status) -> Verdict {
        judge(
            id,
            RecordLookup::Found(record(id, status, NOW).into()),
            NOW,
            &Limits::default(),
        )
    }

    fn live_at(id: &ItemId, status: Status, updated_ms: u64) -> Verdict {
        judge(
            id,
            RecordLookup::Found(record(id, status, updated_ms).into()),
            NOW,
            &Limits::default(),
        )
    }

    #[test]
    fn among_runs_within_the_skew_the_latest_word_is_shown() {
        // The cancelled run's server was 2 s fast: its id looks newest; the re-run made on
        // another server a second later (real time) heartbeats after the cancel.
        let (fast, real) = (id(NOW + 2_000), id(NOW + 1_000));
        let s = settle(vec![
            (fast.clone(), live_at(&fast, Status::Cancelled, NOW)),
            (real.clone(), live_at(&real, Status::Running, NOW + 1_000)),
        ]);
        assert_eq!(s.shown.map(|(id, _)| id), Some(real.clone()));
        assert_eq!(
            s.dead,
            vec![(fast.clone(), Reason::Superseded(real.to_string()))]
        );
        // The same, the re-run's last word before the cancel: shown, but the cancel is kept.
        let s = settle(vec![
            (fast.clone(), live_at(&fast, Status::Cancelled, NOW + 2_000)),
            (real.clone(), live_at(&real, Status::Running, NOW + 1_000)),
        ]);
        assert_eq!(s.shown.map(|(id, _)| id), Some(real.clone()));
        assert!(
            s.dead.is_empty(),
            "a finished run is not deleted for an older word"
        );
        // Both in flight, same time: the newest id is shown, the other kept (never deleted).
        let (a, b) = (id(NOW + 2_000), id(NOW + 1_000));
        let s = settle(vec![
            (a.clone(), live(&a, Status::Running)),
            (b.clone(), live(&b, Status::Queued)),
        ]);
        assert_eq!(s.shown.map(|(id, _)| id), Some(a));
        assert!(s.dead.is_empty());
        // A dead newest run does not hide a live rival; an unreadable one is reported.
        let s = settle(vec![
            (id(NOW + 3_000), Verdict::Dead(Reason::NoRecord)),
            (id(NOW + 2_000), Verdict::Unknown("io".into())),
            (b.clone(), live(&b, Status::Succeeded)),
        ]);
        assert_eq!(s.shown.map(|(id, _)| id), Some(b));
        assert_eq!((s.dead.len(), s.unknown.len()), (1, 1));
    }

    #[test]
    fn among_finished_rivals_the_later_finish_wins_whatever_the_ids() {
        // Run 1 failed; 5 s later run 2 succeeded on a server whose clock is 100 s behind
        // (within the skew): its id looks older, its finish is later.
        let (run1, run2) = (id(NOW), id(NOW + 5_000 - 100_000));
        let s = settle(vec![
            (run1.clone(), live_at(&run1, Status::Failed, NOW + 1_000)),
            (run2.clone(), live_at(&run2, Status::Succeeded, NOW + 6_000)),
        ]);
        assert_eq!(s.shown.map(|(id, _)| id), Some(run2.clone()));
        assert_eq!(s.dead, vec![(run1, Reason::Superseded(run2.to_string()))]);
        // The other way round the later finish still wins: never deleted for an older one.
        let (old, new) = (id(NOW - 1_000), id(NOW));
        let s = settle(vec![
            (new.clone(), live_at(&new, Status::Failed, NOW + 1_000)),
            (old.clone(), live_at(&old, Status::Succeeded, NOW + 9_000)),
        ]);
        assert_eq!(s.shown.map(|(id, _)| id), Some(old.clone()));
        assert_eq!(s.dead, vec![(new, Reason::Superseded(old.to_string()))]);
    }

    #[test]
    fn missing_record_is_pending_then_dead() {
        let l = Limits::default();
        assert_eq!(
            judge(&id(NOW - 1_000), RecordLookup::NotFound, NOW, &l),
            Verdict::Pending
        );
        assert_eq!(
            judge(&id(NOW - 61_000), RecordLookup::NotFound, NOW, &l),
            Verdict::Dead(Reason::NoRecord)
        );
        // Within the skew a marker from a clock ahead of ours is young; beyond it, never.
        assert_eq!(
            judge(&id(NOW + 60_000), RecordLookup::NotFound, NOW, &l),
            Verdict::Pending
        );
        assert_eq!(
            judge(&id(NOW + 3_600_000), RecordLookup::NotFound, NOW, &l),
            Verdict::Dead(Reason::NoRecord)
        );
    }

    #[test]
    fn errors_and_garbage_are_unknown_never_dead() {
        let l = Limits::default();
        let old = id(NOW - 86_400_000);
        assert!(matches!(
            judge(&old, RecordLookup::Failed("io".into()), NOW, &l),
            Verdict::Unknown(_)
        ));
        assert!(matches!(
            judge(
                &old,
                RecordLookup::Found(bytes::Bytes::from_static(b"{")),
                NOW,
                &l
            ),
            Verdict::Unknown(_)
        ));
        let other = record(&id(NOW - 5), Status::Running, NOW);
        assert!(matches!(
            judge(&old, RecordLookup::Found(other.into()), NOW, &l),
            Verdict::Unknown(_)
        ));
    }

    #[test]
    fn finished_long_ago_is_dead_recently_is_live() {
        let l = Limits::default();
        let i = id(NOW - 48 * 3_600_000);
        let old = record(&i, Status::Succeeded, NOW - 25 * 3_600_000);
        assert_eq!(
            judge(&i, RecordLookup::Found(old.into()), NOW, &l),
            Verdict::Dead(Reason::FinishedLongAgo)
        );
        let recent = record(&i, Status::Failed, NOW - 3_600_000);
        assert!(matches!(
            judge(&i, RecordLookup::Found(recent.into()), NOW, &l),
            Verdict::Live(_)
        ));
    }

    #[test]
    fn the_next_change_is_when_a_verdict_turns() {
        let limits = Limits::default();
        let at = |ms: u64| chrono::DateTime::from_timestamp_millis(ms as i64).unwrap();
        let running = |beat: u64| -> ItemRecord {
            let mut r: ItemRecord =
                serde_json::from_slice(&record(&id(NOW - 1_000), Status::Running, beat)).unwrap();
            r.heartbeat_at = Some(at(beat));
            r
        };
        let next = |r: &ItemRecord, now| next_change_ms(&id(NOW - 1_000), r, now, &limits);
        // A heartbeat a minute ago goes stale stale-after later; judged then, it is stalled.
        let r = running(NOW - 60_000);
        let turn = next(&r, NOW).unwrap();
        assert_eq!(turn, NOW - 60_000 + limits.stale_after_ms + 1);
        let bytes = serde_json::to_vec(&r).unwrap();
        let judged = |now| match judge(
            &id(NOW - 1_000),
            RecordLookup::Found(bytes.clone().into()),
            now,
            &limits,
        ) {
            Verdict::Live(card) => card.stalled_at.is_some(),
            other => panic!("{other:?}"),
        };
        assert!(!judged(turn - 1) && judged(turn));
        // Once stalled, only the TTL is ahead.
        assert_eq!(next(&r, turn), Some(NOW - 1_000 + limits.ttl_ms + 1));
        // A finished item turns dead keep-finished after it finished.
        let mut done = running(NOW);
        done.status = Status::Succeeded;
        done.finished_at = Some(at(NOW - 5_000));
        assert_eq!(
            next(&done, NOW),
            Some(NOW - 5_000 + limits.keep_finished_ms + 1)
        );
    }

    #[test]
    fn running_with_old_heartbeat_is_live_and_stalled() {
        let l = Limits::default();
        let i = id(NOW - 3_600_000);
        let Verdict::Live(card) = judge(
            &i,
            RecordLookup::Found(record(&i, Status::Running, NOW - 16 * 60_000).into()),
            NOW,
            &l,
        ) else {
            panic!("stalled items are live");
        };
        assert!(card.stalled);
        assert_eq!(card.badge(), "stalled");
        let Verdict::Live(card) = judge(
            &i,
            RecordLookup::Found(record(&i, Status::Running, NOW - 60_000).into()),
            NOW,
            &l,
        ) else {
            panic!();
        };
        assert!(!card.stalled);
    }
}
