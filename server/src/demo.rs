//! The demo workspace that `make run` / `pickup demo` opens: a few items in every state, and
//! two that keep working while it runs ([`keep_alive`]), so the first screen shows the live
//! path: heartbeats, progress that moves, a run that finishes and a new one that starts.

use crate::error::Result;
use crate::index::Index;
use crate::index::ItemId;
use crate::index::ManualClock;
use crate::index::Workspace;
use crate::index::{Limits, Producer, UserId};
use app::contract::{Filter, ItemUpdate, NewItem, Status, MAX_CAP};
use std::time::Duration;

pub(crate) const DEMO_WS: &str = "demo";

/// Seed `demo` unless it already has markers (so a restart keeps what people did to it).
pub(crate) async fn seed(index: &Index) -> Result<()> {
    let ws = Workspace::parse(DEMO_WS)?;
    if is_seeded(index, &ws).await? {
        return Ok(());
    }
    let now = index.clock().now_ms();
    for item in &MORNING {
        seed_item(index, &ws, now, item).await?;
    }
    Ok(())
}

/// Whether `ws` has a marker.
async fn is_seeded(index: &Index, ws: &Workspace) -> Result<bool> {
    Ok(index.has_markers(ws).await?)
}

/// One of the seed's items, as it stands `minutes_ago`.
struct Seeded {
    key: &'static str,
    title: &'static str,
    status: Status,
    progress: Option<f64>,
    /// (sub, name)
    owner: (&'static str, &'static str),
    minutes_ago: u64,
}

/// The seed: a morning's work, oldest first.
const MORNING: [Seeded; 8] = [
    // An earlier run of a key that runs again below: readers show only the newest run.
    Seeded {
        key: "nightly-train",
        title: "Nightly model training (yesterday's run)",
        status: Status::Succeeded,
        progress: Some(1.0),
        owner: ("ada", "Ada"),
        minutes_ago: 900,
    },
    Seeded {
        key: "backfill-2025",
        title: "Backfill events 2025",
        status: Status::Cancelled,
        progress: None,
        owner: ("ada", "Ada"),
        minutes_ago: 50,
    },
    Seeded {
        key: "reindex",
        title: "Re-index search",
        status: Status::Failed,
        progress: None,
        owner: ("linus", "Linus"),
        minutes_ago: 40,
    },
    Seeded {
        key: "churn-eu",
        title: "Churn analysis — EU",
        status: Status::Succeeded,
        progress: Some(1.0),
        owner: ("grace", "Grace"),
        minutes_ago: 30,
    },
    Seeded {
        key: "etl-orders",
        title: "Orders ETL (no heartbeat for 20 min)",
        status: Status::Running,
        progress: Some(0.4),
        owner: ("linus", "Linus"),
        minutes_ago: 20,
    },
    Seeded {
        key: "interviews-q3",
        title: "Upload: Q3 customer interviews",
        status: Status::Queued,
        progress: None,
        owner: ("you", "You"),
        minutes_ago: 5,
    },
    // The two that keep working ([`keep_alive`] takes them over).
    Seeded {
        key: "nightly-train",
        title: "Nightly model training",
        status: Status::Running,
        progress: Some(0.62),
        owner: ("ada", "Ada"),
        minutes_ago: 2,
    },
    Seeded {
        key: "weekly-report",
        title: "Weekly report draft",
        status: Status::Running,
        progress: Some(0.3),
        owner: ("you", "You"),
        minutes_ago: 1,
    },
];

/// Registers `item` and brings it to its status, both `minutes_ago` before `now_ms`.
async fn seed_item(index: &Index, ws: &Workspace, now_ms: u64, item: &Seeded) -> Result<()> {
    let owner = person(item.owner.0, item.owner.1);
    let new = NewItem {
        key: item.key.into(),
        title: item.title.into(),
        url: Some(format!("/runs/{}", item.key)),
        status: Some(Status::Queued),
        ..NewItem::default()
    };
    // Created and updated `minutes_ago` (an index whose clock says so), so ids, the order
    // of cards and their times look like a real morning's work.
    let then_ms = now_ms - item.minutes_ago * 60_000;
    let then = index
        .clone()
        .with_clock(std::sync::Arc::new(ManualClock::new(then_ms)));
    let record = then.register(ws, &new, &owner).await?;
    let id = ItemId::parse(&record.id)?;
    // An update stamps the heartbeat and the finish time with the index's clock.
    let up = ItemUpdate {
        url: new.url.clone(),
        progress: item.progress,
        ..ItemUpdate::new(item.title, item.status)
    };
    then.update(ws, &id, &up, &owner.user, None).await?;
    Ok(())
}

fn person(sub: &str, name: &str) -> Producer {
    Producer {
        user: UserId::parse(sub).expect("the demo's names are valid"),
        name: name.into(),
    }
}

/// How the demo's workers move: a heartbeat and a step of progress every `every`; a run takes
/// `run_for` from nothing to done. `every` stays well under the reader's `stale-after`
/// ([`Pace::check`]), so no worker's card ever turns stalled.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pace {
    pub every: Duration,
    pub run_for: Duration,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub(crate) enum PaceError {
    #[error("the demo's heartbeat period must be more than zero")]
    Zero,
    #[error("the demo's heartbeat period ({every:?}) must be under half of PICKUP_STALE_AFTER ({stale_after:?}), or its cards would turn stalled")]
    WouldStall {
        every: Duration,
        stale_after: Duration,
    },
    #[error("a demo run ({run_for:?}) must last at least one heartbeat period ({every:?})")]
    ShorterThanABeat { run_for: Duration, every: Duration },
}

impl Pace {
    pub(crate) fn check(self, limits: &Limits) -> std::result::Result<Pace, PaceError> {
        let stale_after = Duration::from_millis(limits.stale_after_ms);
        if self.every.is_zero() {
            Err(PaceError::Zero)
        } else if self.every * 2 >= stale_after {
            Err(PaceError::WouldStall {
                every: self.every,
                stale_after,
            })
        } else if self.run_for < self.every {
            Err(PaceError::ShorterThanABeat {
                run_for: self.run_for,
                every: self.every,
            })
        } else {
            Ok(self)
        }
    }

    /// The progress one heartbeat adds.
    fn step(self) -> f64 {
        self.every.as_secs_f64() / self.run_for.as_secs_f64()
    }
}

/// What each worker runs (key, title), one after the other, round and round. A job's next run
/// supersedes its last (readers show a key's newest run), as a producer's re-runs do.
const ADA_JOBS: &[(&str, &str)] = &[
    ("nightly-train", "Nightly model training"),
    ("thumbnails", "Render thumbnails"),
    ("search-index", "Rebuild search index"),
];
const YOUR_JOBS: &[(&str, &str)] = &[
    ("weekly-report", "Weekly report draft"),
    ("invoices", "Import invoices"),
    ("crm-sync", "Sync CRM contacts"),
];

/// One of the demo's producers and the run it is working on.
struct Worker {
    owner: Producer,
    jobs: &'static [(&'static str, &'static str)],
    /// The next of `jobs` this worker starts.
    next: usize,
    run: Option<(ItemId, ItemUpdate)>,
}

/// The next progress of a run at `progress`: one step on, never past done.
fn advance(progress: f64, step: f64) -> f64 {
    (progress + step).min(1.0)
}

/// Keeps two workers busy in `demo` until the process ends: each beat moves every running run
/// on by one step (a heartbeat), finishes the one that got to 100%, and starts the next job
/// where one finished. It starts by taking over its workers' running jobs (the seed's two, or
/// what an earlier `pickup demo` left running), so none of them is left to turn stalled; the
/// seed's `etl-orders` is the one meant to. A failed write is logged and tried again on the
/// next beat.
///
/// The take-over and the first beat are done when this returns, before the server answers
/// anyone, so no reader ever sees one of the workers' cards stalled; the future it returns
/// beats on.
pub(crate) async fn keep_alive(
    index: std::sync::Arc<Index>,
    pace: Pace,
) -> impl std::future::Future<Output = ()> {
    let ws = Workspace::parse(DEMO_WS).expect("the demo's names are valid");
    let mut workers = vec![
        Worker {
            owner: person("ada", "Ada"),
            jobs: ADA_JOBS,
            next: 0,
            run: None,
        },
        Worker {
            owner: person("you", "You"),
            jobs: YOUR_JOBS,
            next: 0,
            run: None,
        },
    ];
    if let Err(e) = take_over(&index, &ws, &mut workers).await {
        tracing::warn!(error = %e, "demo: could not read what an earlier run left running");
    }
    let mut beat = tokio::time::interval(pace.every);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The first tick is at once: the first beat, here.
    beat.tick().await;
    beat_all(&index, &ws, &mut workers, pace).await;
    async move {
        loop {
            beat.tick().await;
            beat_all(&index, &ws, &mut workers, pace).await;
        }
    }
}

async fn beat_all(index: &Index, ws: &Workspace, workers: &mut [Worker], pace: Pace) {
    for worker in workers {
        if let Err(e) = work(index, ws, worker, pace).await {
            tracing::warn!(error = %e, owner = %worker.owner.user, "demo: a write failed; trying again on the next beat");
        }
    }
}

/// Gives each worker the run of one of its jobs that is still running, if any.
async fn take_over(index: &Index, ws: &Workspace, workers: &mut [Worker]) -> Result<()> {
    for worker in workers.iter_mut() {
        let read = index
            .recent(ws, &worker.owner.user, Filter::Mine, Some(MAX_CAP), None)
            .await?;
        let running = read.page.into_page().cards.into_iter().find_map(|c| {
            let job = worker.jobs.iter().position(|(key, _)| *key == c.key)?;
            (c.status == Status::Running && c.owner.sub == worker.owner.user.as_str())
                .then_some((job, c))
        });
        if let Some((job, card)) = running {
            worker.next = job + 1;
            let up = ItemUpdate {
                url: card.url.clone(),
                progress: card.progress,
                ..ItemUpdate::new(&card.title, Status::Running)
            };
            worker.run = Some((ItemId::parse(&card.id)?, up));
        }
    }
    Ok(())
}

/// One beat of one worker: start a run, move it on, or finish it.
async fn work(index: &Index, ws: &Workspace, worker: &mut Worker, pace: Pace) -> Result<()> {
    let Some((id, up)) = &mut worker.run else {
        let (key, title) = worker.jobs[worker.next % worker.jobs.len()];
        // Every field today; one added later is its default.
        #[allow(clippy::needless_update)]
        let new = NewItem {
            key: key.into(),
            title: title.into(),
            url: Some(format!("/runs/{key}")),
            status: Some(Status::Running),
            progress: Some(0.0),
            ..NewItem::default()
        };
        let record = index.register(ws, &new, &worker.owner).await?;
        let up = ItemUpdate {
            url: new.url.clone(),
            progress: Some(0.0),
            ..ItemUpdate::new(title, Status::Running)
        };
        worker.run = Some((ItemId::parse(&record.id)?, up));
        worker.next += 1;
        return Ok(());
    };
    let progress = advance(up.progress.unwrap_or(0.0), pace.step());
    let done = progress >= 1.0;
    let status = if done {
        Status::Succeeded
    } else {
        Status::Running
    };
    let next = ItemUpdate {
        url: up.url.clone(),
        progress: Some(progress),
        ..ItemUpdate::new(&up.title, status)
    };
    index
        .update(ws, id, &next, &worker.owner.user, None)
        .await?;
    if done {
        worker.run = None;
    } else {
        *up = next;
    }
    Ok(())
}

/// The demo's viewer: "You", with write access to `demo`, for twelve hours.
pub(crate) fn token(auth: &crate::auth::Auth) -> String {
    auth.mint(
        "you",
        Some("You"),
        &[DEMO_WS.into()],
        true,
        std::time::Duration::from_secs(12 * 3600),
        crate::index::Clock::now_ms(&crate::index::SystemClock) / 1000,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pace_that_would_let_a_card_stall_is_refused() {
        let limits = Limits::default();
        let pace = |every, run_for| Pace {
            every: Duration::from_secs(every),
            run_for: Duration::from_secs(run_for),
        };
        assert!(pace(5, 120).check(&limits).is_ok());
        assert_eq!(pace(0, 120).check(&limits).unwrap_err(), PaceError::Zero);
        assert!(matches!(
            pace(450, 900).check(&limits),
            Err(PaceError::WouldStall { .. })
        ));
        assert!(matches!(
            pace(5, 4).check(&limits),
            Err(PaceError::ShorterThanABeat { .. })
        ));
    }

    #[test]
    fn progress_moves_by_a_step_and_stops_at_done() {
        assert_eq!(advance(0.5, 0.25), 0.75);
        assert_eq!(advance(0.9, 0.25), 1.0);
    }
}
