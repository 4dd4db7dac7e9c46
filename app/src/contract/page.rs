//! A page of cards: what `recent`, the live stream and the widget's server functions answer.

use super::link::shown_text;
use super::read::{readable, Fields, Readable};
use super::Cap;
use serde::{Deserialize, Serialize};

/// What a producer says about its item. `stalled` is not a status: it is what the reader
/// concludes from a running item whose heartbeat is old (see [`Card::stalled`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// What an item is until its producer says otherwise.
    #[default]
    Queued,
    Running,
    Succeeded,
    Failed,
    Cancelled,
    /// A status this version does not know (written by a newer producer during a rolling
    /// upgrade): shown with a neutral badge, never finished, never accepted from a producer.
    #[serde(other)]
    Unknown,
}

impl Status {
    /// The statuses a producer may send.
    pub const ALL: [Status; 5] = [
        Status::Queued,
        Status::Running,
        Status::Succeeded,
        Status::Failed,
        Status::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Queued => "queued",
            Status::Running => "running",
            Status::Succeeded => "succeeded",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
            Status::Unknown => "unknown",
        }
    }

    /// The status written `s` on the wire; one this version does not know is `Unknown`, as
    /// serde reads it.
    pub fn from_wire(s: &str) -> Status {
        Status::ALL
            .into_iter()
            .find(|status| status.as_str() == s)
            .unwrap_or(Status::Unknown)
    }

    /// Succeeded, failed and cancelled items are done: they are shown for `keep-finished`.
    pub fn is_finished(self) -> bool {
        matches!(self, Status::Succeeded | Status::Failed | Status::Cancelled)
    }
}

readable! {
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Owner {
    pub sub: String,
    pub name: String,
}
}

readable! {
/// One card of the widget: the item's record as the reader resolved it. Times are RFC 3339.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Card {
    pub id: String,
    pub key: String,
    pub title: String,
    /// One line under the title, when its producer gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Only http(s) or a relative path; the widget renders anything else as plain text.
    pub url: Option<String>,
    pub status: Status,
    /// Running, but the heartbeat is older than `stale-after`.
    pub stalled: bool,
    /// When a stalled item stalled: its last heartbeat (or write) and `stale-after` after it.
    /// Absent when it is not stalled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalled_at: Option<String>,
    pub progress: Option<f64>,
    pub owner: Owner,
    pub created_at: String,
    pub updated_at: String,
    pub finished_at: Option<String>,
    /// The viewer pinned it: it is above the page's cap, at the top, until they unpin it.
    #[serde(default)]
    pub pinned: bool,
}
then Card::shown
}

impl Card {
    /// The card as the widget shows it: its texts without control or bidirectional-control
    /// characters (`link::shown_text`), whoever wrote them. Every path a title takes to the
    /// viewer (the card, the announcement, `pickup:finished`, a notification, the server's
    /// drawing) starts here.
    pub fn shown(mut self) -> Card {
        self.title = shown_text(&self.title);
        self.detail = self.detail.as_deref().map(shown_text);
        self.owner.name = shown_text(&self.owner.name);
        self
    }

    /// The badge's word: the status, or `stalled`.
    pub fn badge(&self) -> &'static str {
        if self.stalled {
            "stalled"
        } else {
            self.status.as_str()
        }
    }
}

readable! {
/// The answer of `recent`: at most N cards, newest first.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RecentPage {
    pub cards: Vec<Card>,
    /// There may be more live items than were shown.
    pub more: bool,
    /// Some item could not be read: the page may be missing cards (they are not lost).
    pub partial: bool,
    pub generated_at: String,
}
}

/// The items a viewer pinned in a workspace (`GET …/pins`), newest first: theirs alone.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Pins {
    pub pins: Vec<String>,
}

/// `GET …/drawing`'s answer, for a loader to show before the wasm has arrived: a widget's first
/// page, the viewer's last look, and the page as the widget draws it with its marks (`html`, the
/// widget's own components: `components::drawing`; none when the page has no card). The widget
/// takes the page and the look as its first `recent` and `looked` calls' answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Drawing {
    pub page: RecentPage,
    pub looked: super::LastLook,
    pub html: Option<String>,
}

/// A page of a live stream of several (`/live?views=all:8,mine:20`): the page, and which of
/// them it is (its cap as the door judged it, [`crate::contract::Cap`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewPage {
    pub filter: Filter,
    pub cap: u32,
    #[serde(flatten)]
    pub page: RecentPage,
}

impl RecentPage {
    /// A page of a live stream or a call: the page, and the view it names (`filter` and `cap`,
    /// on a stream of several views; see [`RecentPage::for_view`]).
    pub fn read_live(o: &impl Fields) -> Option<(RecentPage, Option<(Filter, u32)>)> {
        let view = match (o.string("filter"), o.number("cap")) {
            (Some(filter), Some(cap)) => Some((Filter::from_wire(&filter)?, cap as u32)),
            _ => None,
        };
        Some((RecentPage::read(o)?, view))
    }

    /// This page as a widget of `filter` and `cap` cards shows it. A page of a stream of several
    /// views (`/live?views=all:8,mine:20`, which a browser's widgets share) names its view: the
    /// widget takes one of its own filter with at least its cap, and shows its first `cap` cards
    /// (the same first cards a page of `cap` has: server/tests/scenarios/marker_index.rs checks
    /// that a smaller cap gives a prefix), with `more` when the larger page had more, which is
    /// surer than the page of `cap` would have been (it did not look further). A page of the
    /// widget's own stream or call (`view` none) is its own as it is. `None`: another view's.
    pub fn for_view(
        self,
        view: Option<(Filter, u32)>,
        filter: Filter,
        cap: u32,
    ) -> Option<RecentPage> {
        let Some((of, of_cap)) = view else {
            return Some(self);
        };
        if of != filter || of_cap < cap {
            return None;
        }
        Some(self.at_most(cap))
    }

    /// This page less the item `exclude` (on a host page that is that item's own), with at most
    /// `cap` cards besides the pinned: asked for one more, it still shows `cap` others.
    pub fn without(mut self, exclude: &str, cap: u32) -> RecentPage {
        self.cards.retain(|c| c.id != exclude);
        self.at_most(cap)
    }

    /// The pinned cards (above the cap, at the top) and at most `cap` others, with `more` when
    /// there were more.
    fn at_most(mut self, cap: u32) -> RecentPage {
        let keep = self.cards.iter().take_while(|c| c.pinned).count() + cap as usize;
        self.more |= self.cards.len() > keep;
        self.cards.truncate(keep);
        self
    }
}

/// A live stream's `?views=` (`all:8,mine:20`, in place of `filter` and `cap`): one page per
/// filter, each filter once, each cap judged as every door judges one ([`Cap::clamped`]: brought
/// into the bounds); else what is wrong with it. A browser's widgets share one stream this way
/// (public/share.js writes it: app/tests/cases/live.json holds the cases both agree on).
pub fn views(list: &str) -> Result<Vec<(Filter, u32)>, String> {
    let mut views: Vec<(Filter, u32)> = Vec::new();
    for pair in list.split(',') {
        let (filter, cap) = pair.split_once(':').ok_or_else(|| pair.to_string())?;
        let filter =
            Filter::from_wire(filter).ok_or_else(|| format!("{filter} is not all or mine"))?;
        let cap: u32 = cap.parse().map_err(|_| format!("{cap} is not a number"))?;
        if views.iter().any(|(f, _)| *f == filter) {
            return Err("each filter once".into());
        }
        views.push((filter, Cap::clamped(cap).get()));
    }
    Ok(views)
}

/// Whose items to show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Filter {
    #[default]
    All,
    Mine,
}

impl Filter {
    pub const ALL: [Filter; 2] = [Filter::All, Filter::Mine];

    /// The filter written `s` on the wire, if it is one.
    pub fn from_wire(s: &str) -> Option<Filter> {
        Filter::ALL.into_iter().find(|f| f.as_str() == s)
    }

    /// The filter as it is written on the wire (`?filter=`, the server functions' arguments).
    pub fn as_str(self) -> &'static str {
        match self {
            Filter::All => "all",
            Filter::Mine => "mine",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::read::json::Json;
    use crate::contract::{ApiError, ErrorCode};

    /// A card with every field set (`all`), or every optional one left out.
    fn card(all: bool) -> Card {
        Card {
            id: "1_a".into(),
            key: "a".into(),
            title: "T".into(),
            detail: all.then(|| "3 of 12".into()),
            url: all.then(|| "/runs/1".into()),
            status: Status::Running,
            stalled: all,
            stalled_at: all.then(|| "2026-12-02T10:03:00Z".into()),
            progress: all.then_some(0.5),
            owner: Owner {
                sub: "alice".into(),
                name: "Alice".into(),
            },
            created_at: "2026-12-02T10:00:00Z".into(),
            updated_at: "2026-12-02T10:01:00Z".into(),
            finished_at: all.then(|| "2026-12-02T10:02:00Z".into()),
            pinned: all,
        }
    }

    #[test]
    fn what_serde_writes_is_read_back_whole() {
        let page = RecentPage {
            cards: vec![card(true), card(false)],
            more: true,
            partial: true,
            generated_at: "g".into(),
        };
        let json = Json(serde_json::to_value(&page).unwrap());
        assert_eq!(RecentPage::read(&json), Some(page));
        let error = ApiError::new(ErrorCode::Forbidden, "no");
        assert_eq!(
            ApiError::read(&Json(serde_json::to_value(&error).unwrap())),
            Some(error)
        );
    }

    #[test]
    fn a_status_reads_back_from_its_wire_name_as_serde_writes_it() {
        for status in Status::ALL.into_iter().chain([Status::Unknown]) {
            let json = serde_json::to_string(&status).unwrap();
            assert_eq!(json, format!("\"{}\"", status.as_str()));
            assert_eq!(Status::from_wire(status.as_str()), status);
        }
        assert_eq!(Status::from_wire("paused"), Status::Unknown);
        assert_eq!(Status::from_wire("Running"), Status::Unknown);
    }

    #[test]
    fn pinned_cards_are_above_the_cap_and_one_left_out_leaves_cap_others() {
        let card = |id: &str, pinned: bool| Card {
            id: id.into(),
            pinned,
            ..Card::default()
        };
        let page = |cards: Vec<Card>| RecentPage {
            cards,
            ..RecentPage::default()
        };
        let ids = |p: &RecentPage| p.cards.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
        let asked = page(vec![
            card("p", true),
            card("a", false),
            card("b", false),
            card("c", false),
        ]);
        // A shared page of cap 3 cut to a widget's 2: the pin is above them.
        let cut = asked
            .clone()
            .for_view(Some((Filter::All, 3)), Filter::All, 2)
            .unwrap();
        assert_eq!(
            (ids(&cut), cut.more),
            (vec!["p".into(), "a".into(), "b".into()], true)
        );
        // Asked for one more than its cap of 2, less "a": still two others.
        let left_out = asked.clone().without("a", 2);
        assert_eq!(
            (ids(&left_out), left_out.more),
            (vec!["p".into(), "b".into(), "c".into()], false)
        );
        let not_there = asked.clone().without("zz", 2);
        assert_eq!(
            (ids(&not_there), not_there.more),
            (vec!["p".into(), "a".into(), "b".into()], true)
        );
        let pin_left_out = asked.without("p", 2);
        assert_eq!(ids(&pin_left_out), vec!["a".to_string(), "b".into()]);
    }

    #[test]
    fn a_filter_is_written_as_serde_writes_it() {
        for filter in [Filter::All, Filter::Mine] {
            let json = serde_json::to_string(&filter).unwrap();
            assert_eq!(json, format!("\"{}\"", filter.as_str()));
        }
    }
}
