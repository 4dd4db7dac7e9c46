//! `pickup item start|update|finish|get|rm`: one API call each, for scripts in any language.
//! `start` prints the new item's id; `update`, `finish` and `get` print its record as one line
//! of JSON; `rm` prints nothing. A failure is an error (exit status 1) that says what the
//! server said.

use crate::producer::client::Client;
use app::contract::{ItemRecord, ItemUpdate, NewItem, Status};

/// What `update` and `finish` change besides the status; what is not given stays as the
/// record has it.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Changes {
    /// A new title.
    #[arg(long)]
    pub title: Option<String>,
    /// A new line under the title ("" removes it).
    #[arg(long)]
    pub detail: Option<String>,
    /// Where the card links to: http(s) or a path starting with '/'.
    #[arg(long)]
    pub url: Option<String>,
    /// A number from 0 to 1.
    #[arg(long)]
    pub progress: Option<f64>,
}

pub(crate) async fn start(client: &Client, ws: &str, item: &NewItem) -> anyhow::Result<String> {
    Ok(client.register(ws, item).await?.id)
}

/// Reads the record and writes it back with `changes`. The record's producer is its only
/// writer, so nobody's change is lost between the two.
pub(crate) async fn update(
    client: &Client,
    ws: &str,
    id: &str,
    status: Option<Status>,
    changes: Changes,
) -> anyhow::Result<ItemRecord> {
    let record = client.get(ws, id).await?;
    let up = changed(&record, status, changes);
    Ok(client.update(ws, id, &up, None).await?)
}

/// The whole record the server is sent: the old one with `changes`. The heartbeat is left to
/// the server (it sets it on every update of a running item), and so is the finishing time,
/// except when a finished item stays finished.
fn changed(record: &ItemRecord, status: Option<Status>, changes: Changes) -> ItemUpdate {
    let mut up = record.again();
    up.status = status.unwrap_or(record.status);
    let status = up.status;
    up.title = changes.title.unwrap_or(up.title);
    up.detail = changes.detail.or(up.detail);
    up.url = changes.url.or(up.url);
    up.progress = changes.progress.or(up.progress);
    up.finished_at = (status.is_finished() && record.status.is_finished())
        .then_some(record.finished_at)
        .flatten();
    up
}

pub(crate) async fn get(client: &Client, ws: &str, id: &str) -> anyhow::Result<ItemRecord> {
    Ok(client.get(ws, id).await?)
}

pub(crate) async fn remove(client: &Client, ws: &str, id: &str) -> anyhow::Result<()> {
    Ok(client.remove(ws, id).await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::contract::Owner;

    fn record(status: Status) -> ItemRecord {
        let t = "2026-11-30T12:00:00Z".parse().unwrap();
        ItemRecord {
            title: "Train".into(),
            url: Some("/runs/1".into()),
            status,
            progress: Some(0.5),
            owner: Owner {
                sub: "ci".into(),
                name: "CI".into(),
            },
            created_at: t,
            updated_at: t,
            heartbeat_at: Some(t),
            finished_at: status.is_finished().then_some(t),
            ..ItemRecord::default()
        }
    }

    #[test]
    fn an_update_keeps_what_it_does_not_change_and_lets_the_server_stamp_times() {
        let up = changed(
            &record(Status::Running),
            None,
            Changes {
                progress: Some(0.75),
                ..Changes::default()
            },
        );
        assert_eq!(up.title, "Train");
        assert_eq!(up.url.as_deref(), Some("/runs/1"));
        assert_eq!(up.status, Status::Running);
        assert_eq!(up.progress, Some(0.75));
        assert_eq!(up.heartbeat_at, None, "the server sets the heartbeat");
        let finish = changed(
            &record(Status::Running),
            Some(Status::Failed),
            Changes::default(),
        );
        assert_eq!(
            finish.finished_at, None,
            "the server sets the finishing time"
        );
        let retitle = changed(
            &record(Status::Succeeded),
            None,
            Changes {
                title: Some("Renamed".into()),
                ..Changes::default()
            },
        );
        assert!(
            retitle.finished_at.is_some(),
            "a finished item keeps its time"
        );
    }
}
