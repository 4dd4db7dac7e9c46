//! The item record (`ws/{ws}/items/{id}.json`, its shape in `app::contract`), written by the
//! item's producer only: how a request's body makes one, and the checks what producers send
//! must pass.

use super::id::ItemId;
use super::names::{UserId, Workspace};
use app::contract::item::MAX_DETAIL_CHARS;
use app::contract::{
    stored_text, stored_url, ItemRecord, ItemUpdate, NewItem, Owner, Status, MAX_NAME_CHARS,
    MAX_TITLE_CHARS, MAX_URL_CHARS,
};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use thiserror::Error;

/// Just the owner of a stored record and when it was last written: read leniently (a record
/// written by a newer version with fields or statuses this one does not know still has them).
#[derive(Deserialize)]
struct Owned {
    owner: Owner,
    #[serde(default)]
    updated_at: Option<DateTime<Utc>>,
}

/// Who registers an item, typed: the verified caller's id and display name. The record's
/// [`Owner`] is its wire form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Producer {
    pub user: UserId,
    pub name: String,
}

impl Producer {
    pub fn owner(&self) -> Owner {
        Owner {
            sub: self.user.to_string(),
            name: self.name.clone(),
        }
    }
}

/// The owner a stored record names and its last write in ms (0 if it names none), or `None`
/// if the bytes are not a record.
pub(crate) fn owner_and_time(bytes: &[u8]) -> Option<(Owner, u64)> {
    let o = serde_json::from_slice::<Owned>(bytes).ok()?;
    let at = o
        .updated_at
        .map_or(0, |t| t.timestamp_millis().max(0) as u64);
    Some((o.owner, at))
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BodyError {
    #[error("title must be 1 to {MAX_TITLE_CHARS} characters, with no control or bidirectional-control characters")]
    Title,
    #[error("detail must be at most {MAX_DETAIL_CHARS} characters, with no control or bidirectional-control characters")]
    Detail,
    #[error("url must be an http(s) URL or a path starting with '/', at most {MAX_URL_CHARS} characters, with no spaces, backslashes, control or bidirectional-control characters")]
    Url,
    #[error("progress must be a number from 0 to 1, or null")]
    Progress,
    #[error("status must be one of queued, running, succeeded, failed, cancelled")]
    Status,
    #[error("{0} is kept by the server and differs from the item's: send it as GET gave it, or leave it out")]
    ReadOnly(&'static str),
    #[error("owner name must be 1 to {MAX_NAME_CHARS} characters, with no control or bidirectional-control characters")]
    OwnerName,
}

/// Why a record is not one a server could have written ([`ItemRecord::check_as_written`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub(crate) enum RecordError {
    #[error("the record's {0} is not its key's")]
    Mismatch(&'static str),
    #[error(transparent)]
    Body(#[from] BodyError),
}

fn check_title(title: &str) -> Result<String, BodyError> {
    stored_text(title, MAX_TITLE_CHARS).ok_or(BodyError::Title)
}

/// The line under the title: the title's rule, shorter; empty is none.
fn check_detail(detail: Option<&str>) -> Result<Option<String>, BodyError> {
    match detail.map(str::trim).filter(|d| !d.is_empty()) {
        None => Ok(None),
        Some(d) => stored_text(d, MAX_DETAIL_CHARS)
            .map(Some)
            .ok_or(BodyError::Detail),
    }
}

/// A person's display name (an item's owner).
fn check_name(name: &str) -> Result<String, BodyError> {
    stored_text(name, MAX_NAME_CHARS).ok_or(BodyError::OwnerName)
}

/// Only `http(s)://…` or a relative path are stored: a `javascript:` link is refused. The rule
/// is the contract's (`app::contract::link`), which the widget's renderers apply again.
fn check_url(url: Option<&str>) -> Result<Option<String>, BodyError> {
    match url.map(str::trim).filter(|u| !u.is_empty()) {
        None => Ok(None),
        Some(u) => stored_url(u).map(Some).ok_or(BodyError::Url),
    }
}

pub(crate) fn check_status(status: Status) -> Result<Status, BodyError> {
    match status {
        Status::Unknown => Err(BodyError::Status),
        known => Ok(known),
    }
}

pub(crate) fn check_progress(p: Option<f64>) -> Result<Option<f64>, BodyError> {
    match p {
        Some(v) if !(0.0..=1.0).contains(&v) || !v.is_finite() => Err(BodyError::Progress),
        other => Ok(other),
    }
}

pub(crate) fn ms_to_time(ms: u64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms as i64).unwrap_or_default()
}

/// `item` as it would be stored: each field by its rule (the key's is the id's, checked as a
/// name). For a producer's checks before it sends, and the server's.
pub(crate) fn checked_new(item: &NewItem) -> Result<NewItem, BodyError> {
    Ok(NewItem {
        key: item.key.clone(),
        title: check_title(&item.title)?,
        detail: check_detail(item.detail.as_deref())?,
        url: check_url(item.url.as_deref())?,
        status: Some(check_status(item.status.unwrap_or(Status::Queued))?),
        progress: check_progress(item.progress)?,
    })
}

/// A new record for `id`, created now.
pub(crate) fn new_record(
    ws: &Workspace,
    id: &ItemId,
    item: &NewItem,
    owner: Owner,
) -> Result<ItemRecord, BodyError> {
    let now = ms_to_time(id.created_ms());
    let item = checked_new(item)?;
    let status = item.status.unwrap_or_default();
    Ok(ItemRecord {
        id: id.to_string(),
        ws: ws.to_string(),
        key: id.key().to_string(),
        title: item.title,
        detail: item.detail,
        url: item.url,
        status,
        progress: item.progress,
        owner,
        created_at: now,
        updated_at: now,
        heartbeat_at: (status == Status::Running).then_some(now),
        finished_at: status.is_finished().then_some(now),
    })
}

/// The record an update describes. No read of the old record's content: whatever the
/// producer sends is the record, except what the server keeps (`owner`: the registering
/// token's subject, read from the stored record by the caller).
pub(crate) fn updated_record(
    ws: &Workspace,
    id: &ItemId,
    up: &ItemUpdate,
    owner: Owner,
    now_ms: u64,
) -> Result<ItemRecord, BodyError> {
    let now = ms_to_time(now_ms);
    let created_at = ms_to_time(id.created_ms());
    let id_text = id.to_string();
    let kept: [(&'static str, bool); 5] = [
        ("id", up.id.as_ref().is_some_and(|v| *v != id_text)),
        ("ws", up.ws.as_ref().is_some_and(|v| v != ws.as_str())),
        (
            "key",
            up.key.as_ref().is_some_and(|v| v != id.key().as_str()),
        ),
        ("owner", up.owner.as_ref().is_some_and(|v| *v != owner)),
        ("created_at", up.created_at.is_some_and(|v| v != created_at)),
    ];
    if let Some((field, _)) = kept.into_iter().find(|(_, differs)| *differs) {
        return Err(BodyError::ReadOnly(field));
    }
    Ok(ItemRecord {
        id: id_text,
        ws: ws.to_string(),
        key: id.key().to_string(),
        title: check_title(&up.title)?,
        detail: check_detail(up.detail.as_deref())?,
        url: check_url(up.url.as_deref())?,
        status: check_status(up.status)?,
        progress: check_progress(up.progress)?,
        owner,
        created_at,
        updated_at: now,
        // Every accepted update is a heartbeat, dated by this server (by the store's clock
        // when this server's is off it), whatever the body says: a producer's clock, or a
        // body copied from a GET, must neither stall a live item nor keep a dead one fresh.
        heartbeat_at: Some(now),
        // Likewise the finish: which finished run of a key wins compares these times.
        finished_at: up.status.is_finished().then_some(now),
    })
}

/// Whether `record` could have been written by a server (a peer's fact carries one): it
/// belongs to `ws` and `id`, and each field passes the rule a request's body passes. A record
/// read from the store is not held to this (an older server's records still show).
pub(crate) fn check_as_written(
    record: &ItemRecord,
    ws: &Workspace,
    id: &ItemId,
) -> Result<(), RecordError> {
    if record.ws != ws.as_str() {
        return Err(RecordError::Mismatch("ws"));
    }
    if record.id != id.to_string() {
        return Err(RecordError::Mismatch("id"));
    }
    if record.key != id.key().as_str() {
        return Err(RecordError::Mismatch("key"));
    }
    UserId::parse(&record.owner.sub).map_err(|_| RecordError::Mismatch("owner"))?;
    if check_title(&record.title)? != record.title {
        return Err(BodyError::Title.into());
    }
    if check_detail(record.detail.as_deref())? != record.detail {
        return Err(BodyError::Detail.into());
    }
    if check_url(record.url.as_deref())? != record.url {
        return Err(BodyError::Url.into());
    }
    if check_name(&record.owner.name)? != record.owner.name {
        return Err(BodyError::OwnerName.into());
    }
    check_status(record.status)?;
    check_progress(record.progress)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        for ok in [
            "https://x.example/a?b=1",
            "http://localhost:3000/",
            "/runs/42",
            "",
        ] {
            assert!(check_url(Some(ok)).is_ok(), "{ok}");
        }
        for bad in [
            "javascript:alert(1)",
            "JAVASCRIPT:alert(1)",
            "data:text/html,x",
            "//evil.example",
            "runs/42",
            "https://",
            "ftp://x",
            "https://a b",
            "/runs/\u{202E}txt.exe",
            "https://x.example/\u{2066}a",
            "/runs/\u{0007}",
            "/\\evil.example",
            "https://evil.example\\@good.example",
        ] {
            assert_eq!(check_url(Some(bad)), Err(BodyError::Url), "{bad}");
        }
    }

    #[test]
    fn titles_and_progress() {
        assert!(check_title("  ok ").is_ok());
        assert!(check_title("").is_err());
        assert!(check_title(&"t".repeat(201)).is_err());
        assert!(check_title(&"é".repeat(200)).is_ok());
        assert_eq!(
            check_title("مرحبا בעולם 😀").as_deref(),
            Ok("مرحبا בעולם 😀")
        );
        for c in [
            '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}',
            '\u{2068}', '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}', '\u{0000}', '\u{001B}',
            '\n', '\u{007F}', '\u{0085}',
        ] {
            let text = format!("report{c}fdp.exe");
            assert_eq!(check_title(&text), Err(BodyError::Title), "{c:?}");
            assert_eq!(check_name(&text), Err(BodyError::OwnerName), "{c:?}");
            assert_eq!(check_detail(Some(&text)), Err(BodyError::Detail), "{c:?}");
        }
        assert_eq!(check_detail(Some(" 3 of 12 ")), Ok(Some("3 of 12".into())));
        assert_eq!(check_detail(Some("  ")), Ok(None), "empty is none");
        assert_eq!(check_detail(None), Ok(None));
        assert!(check_detail(Some(&"é".repeat(120))).is_ok());
        assert_eq!(check_detail(Some(&"d".repeat(121))), Err(BodyError::Detail));
        assert_eq!(check_name(" Alice ").as_deref(), Ok("Alice"));
        assert!(check_name("  ").is_err());
        assert!(check_name(&"n".repeat(201)).is_err());
        assert!(check_progress(Some(1.5)).is_err());
        assert!(check_progress(Some(f64::NAN)).is_err());
        assert_eq!(check_progress(Some(0.5)), Ok(Some(0.5)));
    }
}
