//! A registration whose answer was lost may have been applied. Registering again would make a
//! second item of the same key, and the first would stay "running" (then "stalled") for ever,
//! since nothing would finish it: the API has no idempotency key. So before registering again,
//! the wrapper reads its own newest items ("Mine") and adopts the one this registration made.
//!
//! What identifies it: this token's subject owns it (the "Mine" listing), it has this key, it
//! is not finished, and it was created no earlier than the first unanswered attempt, less
//! [`CLOCK_MARGIN`] for the difference between this machine's clock and the server's. Another
//! run of the same key by the same subject, registered inside that window, would be taken for
//! it; the read path shows one card per key anyway, so the two were one card already.
//!
//! It must also be listed in the workspace (everyone's listing): a registration the server cut
//! off half-way (the connection dropped while it wrote) may have left the record and the
//! owner's marker but not the workspace's marker. Such an item is seen by its owner only;
//! adopting it would report the run where nobody else looks, so it is registered again.

use app::contract::Card;
use chrono::{DateTime, Utc};
use std::time::Duration;

/// How far the server's clock may be behind this machine's and a lost registration still be
/// recognised. A registration made by a server whose clock is further behind is not found and
/// is registered again (the duplicate is the one left running).
pub(super) const CLOCK_MARGIN: Duration = Duration::from_secs(30);

/// The id of the item an unanswered registration of `key`, first sent at `since` (this
/// machine's clock), made: the newest such card of `mine` that `listed` (the workspace's
/// cards) shows too, if any.
pub(super) fn adoptable(
    mine: &[Card],
    listed: &[Card],
    key: &str,
    since: DateTime<Utc>,
) -> Option<String> {
    let earliest = since - CLOCK_MARGIN;
    mine.iter()
        .filter(|c| c.key == key && !c.status.is_finished())
        .filter(|c| listed.iter().any(|l| l.id == c.id))
        .filter_map(|c| {
            let created = DateTime::parse_from_rfc3339(&c.created_at).ok()?;
            (created >= earliest).then_some((created, &c.id))
        })
        .max_by_key(|(created, _)| *created)
        .map(|(_, id)| id.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::contract::{Owner, Status};

    fn card(id: &str, key: &str, status: Status, created_at: &str) -> Card {
        Card {
            id: id.into(),
            key: key.into(),
            title: "t".into(),
            status,
            owner: Owner {
                sub: "ci".into(),
                name: "CI".into(),
            },
            created_at: created_at.into(),
            updated_at: created_at.into(),
            ..Card::default()
        }
    }

    #[test]
    fn adopts_only_an_unfinished_item_of_this_key_made_since_the_attempt() {
        let since: DateTime<Utc> = "2026-11-30T12:00:00Z".parse().unwrap();
        let ours = card("a", "nightly", Status::Running, "2026-11-30T12:00:01.000Z");
        let cards = vec![
            card(
                "other-key",
                "weekly",
                Status::Running,
                "2026-11-30T12:00:02Z",
            ),
            card(
                "finished",
                "nightly",
                Status::Succeeded,
                "2026-11-30T12:00:03Z",
            ),
            card(
                "yesterday",
                "nightly",
                Status::Running,
                "2026-11-29T12:00:00Z",
            ),
            ours,
        ];
        assert_eq!(
            adoptable(&cards, &cards, "nightly", since).as_deref(),
            Some("a")
        );
        assert_eq!(adoptable(&cards[..3], &cards, "nightly", since), None);
        // Not in the workspace's listing (half-registered): not adopted.
        assert_eq!(adoptable(&cards, &cards[..3], "nightly", since), None);
        // A server clock a little behind this machine's still counts.
        let behind = vec![card(
            "b",
            "nightly",
            Status::Running,
            "2026-11-30T11:59:45Z",
        )];
        assert_eq!(
            adoptable(&behind, &behind, "nightly", since).as_deref(),
            Some("b")
        );
        let unreadable = vec![card("c", "nightly", Status::Running, "yesterday")];
        assert_eq!(adoptable(&unreadable, &unreadable, "nightly", since), None);
    }
}
