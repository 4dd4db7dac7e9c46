//! The demo workspace that `make run` / `pickup demo` opens: a few items in every state.

use crate::error::Result;
use crate::index::store::Scope;
use crate::index::Index;
use crate::index::ItemId;
use crate::index::ManualClock;
use crate::index::Workspace;
use crate::index::{ItemUpdate, NewItem, Producer, UserId};
use app::model::Status;

pub const DEMO_WS: &str = "demo";

/// Seed `demo` unless it already has markers (so a restart keeps what people did to it).
pub async fn seed(index: &Index) -> Result<()> {
    let ws = Workspace::parse(DEMO_WS)?;
    let mut markers = index.store().pages(&Scope::Markers(ws.clone()), None);
    let mut seeded = false;
    // A page may be empty and still not the last: read on until a key or the end.
    while let Some(found) = markers.next(1).await? {
        if !found.keys.is_empty() {
            seeded = true;
            break;
        }
    }
    if seeded {
        return Ok(());
    }
    let person = |sub: &str, name: &str| Producer {
        user: UserId::parse(sub).expect("the demo's names are valid"),
        name: name.into(),
    };
    let now = index.clock.now_ms();
    let items = [
        // An earlier run of a key that runs again below: readers show only the newest run.
        (
            "nightly-train",
            "Nightly model training (yesterday's run)",
            Status::Succeeded,
            Some(1.0),
            person("ada", "Ada"),
            900,
        ),
        (
            "backfill-2025",
            "Backfill events 2025",
            Status::Cancelled,
            None,
            person("ada", "Ada"),
            50,
        ),
        (
            "reindex",
            "Re-index search",
            Status::Failed,
            None,
            person("linus", "Linus"),
            40,
        ),
        (
            "churn-eu",
            "Churn analysis — EU",
            Status::Succeeded,
            Some(1.0),
            person("grace", "Grace"),
            30,
        ),
        (
            "etl-orders",
            "Orders ETL (no heartbeat for 20 min)",
            Status::Running,
            Some(0.4),
            person("linus", "Linus"),
            20,
        ),
        (
            "interviews-q3",
            "Upload: Q3 customer interviews",
            Status::Queued,
            None,
            person("you", "You"),
            5,
        ),
        (
            "nightly-train",
            "Nightly model training",
            Status::Running,
            Some(0.62),
            person("ada", "Ada"),
            2,
        ),
        (
            "weekly-report",
            "Weekly report draft",
            Status::Running,
            Some(0.3),
            person("you", "You"),
            1,
        ),
    ];
    for (key, title, status, progress, owner, minutes_ago) in items {
        let new = NewItem {
            key: key.into(),
            title: title.into(),
            url: Some(format!("/runs/{key}")),
            status: Some(Status::Queued),
            progress: None,
        };
        // Created and updated `minutes_ago` (an index whose clock says so), so ids, the order
        // of cards and their times look like a real morning's work.
        let then_ms = now - minutes_ago * 60_000;
        let then = index
            .clone()
            .with_clock(std::sync::Arc::new(ManualClock::new(then_ms)));
        let record = then.register(&ws, &new, &owner).await?;
        let id = ItemId::parse(&record.id)?;
        // An update stamps the heartbeat and the finish time with the index's clock.
        let up = ItemUpdate {
            url: new.url.clone(),
            progress,
            ..ItemUpdate::new(title, status)
        };
        then.update(&ws, &id, &up, &owner.user, None).await?;
    }
    Ok(())
}

/// The demo's viewer: "You", with write access to `demo`, for twelve hours.
pub fn token(auth: &crate::http::Auth) -> String {
    auth.mint(
        "you",
        Some("You"),
        &[DEMO_WS.into()],
        true,
        std::time::Duration::from_secs(12 * 3600),
        crate::index::Clock::now_ms(&crate::index::SystemClock) / 1000,
    )
}
