//! "Since you looked": a viewer's last look at a workspace, kept under the viewer's own key in
//! the store (`looked/{ws}/{user}`, written only by that viewer), and the rule that marks
//! the cards that changed after it.

use super::page::Card;
use super::read::readable;
use serde::{Deserialize, Serialize};

readable! {
/// A viewer's last look at a workspace (`POST /api/looked`, `…/look`; `GET`/`PUT
/// /api/v1/workspaces/{ws}/looked`): a time of the server's clock (RFC 3339), or none when
/// this viewer has never looked at this workspace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct LastLook {
    pub at: Option<String>,
}
}

/// What happened to a card after the viewer's last look.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Since {
    /// The item appeared after it.
    New,
    /// The item reached a final status (succeeded, failed, cancelled) or stalled after it.
    Finished,
}

impl Since {
    /// The card's `data-since` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Since::New => "new",
            Since::Finished => "finished",
        }
    }

    /// What changed about `card` after `looked` (milliseconds since the epoch), its times read
    /// by `ms` (`None` for a time that does not read: such a card is never marked). An item that
    /// appeared and finished since is `Finished`: that it is done is what the viewer wants first.
    pub fn of(card: &Card, looked: f64, ms: impl Fn(&str) -> Option<f64>) -> Option<Since> {
        let after = |t: Option<&String>| t.and_then(|t| ms(t)).is_some_and(|t| t > looked);
        let ended = if card.status.is_finished() {
            after(card.finished_at.as_ref().or(Some(&card.updated_at)))
        } else {
            card.stalled && after(card.stalled_at.as_ref())
        };
        if ended {
            Some(Since::Finished)
        } else if after(Some(&card.created_at)) {
            Some(Since::New)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{Owner, Status};

    fn card(status: Status, created: &str, finished: Option<&str>, stalled: Option<&str>) -> Card {
        Card {
            id: "1_a".into(),
            key: "a".into(),
            title: "A".into(),
            status,
            stalled: stalled.is_some(),
            stalled_at: stalled.map(str::to_string),
            owner: Owner {
                sub: "alice".into(),
                name: "Alice".into(),
            },
            created_at: created.into(),
            updated_at: finished.unwrap_or(created).into(),
            finished_at: finished.map(str::to_string),
            ..Card::default()
        }
    }

    /// Times as plain numbers of milliseconds, so the rule is read without a clock.
    fn ms(t: &str) -> Option<f64> {
        t.parse().ok()
    }

    #[test]
    fn cards_are_marked_by_what_happened_after_the_look() {
        let looked = 100.0;
        let since = |c: Card| Since::of(&c, looked, ms);
        assert_eq!(since(card(Status::Running, "50", None, None)), None);
        assert_eq!(
            since(card(Status::Running, "150", None, None)),
            Some(Since::New)
        );
        assert_eq!(
            since(card(Status::Failed, "50", Some("150"), None)),
            Some(Since::Finished)
        );
        assert_eq!(since(card(Status::Succeeded, "50", Some("90"), None)), None);
        assert_eq!(
            since(card(Status::Cancelled, "120", Some("130"), None)),
            Some(Since::Finished),
            "appeared and finished since: finished"
        );
        assert_eq!(
            since(card(Status::Running, "50", None, Some("150"))),
            Some(Since::Finished),
            "stalled since"
        );
        assert_eq!(
            since(card(Status::Running, "50", None, Some("90"))),
            None,
            "stalled before the look"
        );
        assert_eq!(
            since(card(Status::Queued, "100", None, None)),
            None,
            "at the look is seen"
        );
    }

    #[test]
    fn a_finished_card_without_finished_at_counts_its_last_write() {
        let mut c = card(Status::Succeeded, "50", None, None);
        c.updated_at = "150".into();
        assert_eq!(Since::of(&c, 100.0, ms), Some(Since::Finished));
    }

    #[test]
    fn a_time_that_does_not_read_marks_nothing() {
        let c = card(Status::Failed, "x", Some("y"), None);
        assert_eq!(Since::of(&c, 100.0, ms), None);
    }

    #[test]
    fn a_look_reads_back_as_serde_writes_it() {
        let never = serde_json::to_string(&LastLook::default()).unwrap();
        assert_eq!(never, r#"{"at":null}"#);
    }
}
