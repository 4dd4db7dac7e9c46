//! The REST API's bodies: what a producer sends (`POST …/items`, `PUT …/items/{id}`) and the
//! item record every write and `GET …/items/{id}` answer with, which is also what the store
//! holds (`ws/{ws}/items/{id}.json`). The server's checks of what a producer sends are its own
//! (`server/src/index/core/record.rs`); the bounds they check are these.
//!
//! Server-side only (feature `ssr`): the widget reads cards, never records.

use super::link::{is_unsafe_char, safe_link};
use super::page::{Card, Owner, Status};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

/// The most characters of an item's title, and of a person's display name (an item's owner).
pub const MAX_TITLE_CHARS: usize = 200;
pub const MAX_NAME_CHARS: usize = 200;
/// The most characters of an item's detail, the one line under its title.
pub const MAX_DETAIL_CHARS: usize = 120;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ItemRecord {
    pub id: String,
    pub ws: String,
    pub key: String,
    pub title: String,
    /// One line under the title ("Uploading 3 of 12 files"), changed with any update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    pub url: Option<String>,
    pub status: Status,
    pub progress: Option<f64>,
    pub owner: Owner,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub heartbeat_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// `POST /items`: what a producer says when it registers an item. Serialised by the producer
/// client, read by the server.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewItem {
    /// What the item is a run of: 1 to 64 of A-Z, a-z, 0-9 and '-'. A newer run of the same key
    /// supersedes an older finished one.
    #[schema(min_length = 1, max_length = 64, pattern = "^[A-Za-z0-9-]+$")]
    pub key: String,
    #[schema(min_length = 1, max_length = 200)]
    pub title: String,
    /// One line under the title, by the title's rule; none when absent or empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 120)]
    pub detail: Option<String>,
    /// http(s), or a path starting with `/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 2048)]
    pub url: Option<String>,
    /// `queued` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    #[serde(default)]
    #[schema(minimum = 0.0, maximum = 1.0)]
    pub progress: Option<f64>,
}

/// `PUT /items/{id}`: the whole record as the producer now sees it. The server fills in what
/// the id, the clock and the registration already say. A body may carry the record exactly as
/// `GET` gave it: the fields the server keeps (`id`, `ws`, `key`, `owner`, `created_at`) are
/// accepted when they match the item and refused, by name, when they do not; `updated_at`,
/// `heartbeat_at` and `finished_at` are the server's and ignored.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ItemUpdate {
    #[schema(min_length = 1, max_length = 200)]
    pub title: String,
    /// One line under the title, by the title's rule; none when absent or empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 120)]
    pub detail: Option<String>,
    /// http(s), or a path starting with `/`.
    #[serde(default)]
    #[schema(max_length = 2048)]
    pub url: Option<String>,
    pub status: Status,
    #[serde(default)]
    #[schema(minimum = 0.0, maximum = 1.0)]
    pub progress: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ws: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<DateTime<Utc>>,
}

impl NewItem {
    /// The update that says this item again, with `title` and `status` now: what its producer
    /// sends with each change (every field it said at registration, said again).
    pub fn again(&self, title: String, status: Status) -> ItemUpdate {
        ItemUpdate {
            detail: self.detail.clone(),
            url: self.url.clone(),
            progress: self.progress,
            ..ItemUpdate::new(title, status)
        }
    }
}

impl ItemUpdate {
    /// An update that says only a title and a status.
    pub fn new(title: impl Into<String>, status: Status) -> Self {
        ItemUpdate {
            title: title.into(),
            status,
            ..ItemUpdate::default()
        }
    }
}

/// Text as it is stored (a title, a person's display name): trimmed, 1 to `max` characters,
/// none of them a control or bidirectional-control character ([`is_unsafe_char`]). `None` when
/// it breaks the rule. The one rule of every text a card shows, for the server's checks and the
/// producer's alike.
pub fn stored_text(text: &str, max: usize) -> Option<String> {
    let t = text.trim();
    let n = t.chars().count();
    (n > 0 && n <= max && !t.chars().any(is_unsafe_char)).then(|| t.to_string())
}

/// A link as it is stored: the contract's rule ([`safe_link`]), with the `url` crate's parser
/// judging whether an absolute URL is http(s) with a host. `None` when it breaks the rule.
pub fn stored_url(url: &str) -> Option<String> {
    let http_with_host = |u: &str| {
        url::Url::parse(u)
            .is_ok_and(|p| matches!(p.scheme(), "http" | "https") && p.host().is_some())
    };
    safe_link(url, http_with_host).map(str::to_string)
}

impl ItemRecord {
    /// The update that writes this record back as it is (the server's own fields left to it).
    pub fn again(&self) -> ItemUpdate {
        ItemUpdate {
            detail: self.detail.clone(),
            url: self.url.clone(),
            progress: self.progress,
            ..ItemUpdate::new(self.title.clone(), self.status)
        }
    }

    /// The record as the widget shows it; whether, and since when, it is stalled is the
    /// reader's conclusion, not the record's.
    pub fn to_card(&self, stalled_at: Option<DateTime<Utc>>) -> Card {
        Card {
            id: self.id.clone(),
            key: self.key.clone(),
            title: self.title.clone(),
            detail: self.detail.clone(),
            url: self.url.clone(),
            status: self.status,
            stalled: stalled_at.is_some(),
            stalled_at: stalled_at.map(rfc3339),
            progress: self.progress,
            owner: self.owner.clone(),
            created_at: rfc3339(self.created_at),
            updated_at: rfc3339(self.updated_at),
            finished_at: self.finished_at.map(rfc3339),
            pinned: false,
        }
    }
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}
