//! Which of the viewer's own items ended while a widget watched: each once per widget, for its
//! `pickup:finished` event and the browser's notification. Pure: the widget gives it each page,
//! the viewer's id and a way to read times.

use crate::contract::{Card, RecentPage};

/// How an item ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Succeeded, failed or cancelled: `pickup:finished`, and a notification.
    Finished,
    /// Still running, but its heartbeat stopped: a notification only.
    Stalled,
}

/// What a widget has told: the time of its first page, and the endings told since.
#[derive(Debug, Default)]
pub struct Endings {
    /// The first page's `generated_at` (ms): an item that ended before it is not news.
    since: Option<f64>,
    told: Vec<(String, Ending)>,
}

impl Endings {
    /// The viewer's own cards of `page` that ended after the first page and were not told
    /// yet; they are told from now on. The first page tells nothing: what had ended when the
    /// widget came is the "since you looked" marks' to show, not news.
    pub fn news(
        &mut self,
        page: &RecentPage,
        viewer: &str,
        ms: impl Fn(&str) -> Option<f64>,
    ) -> Vec<(Card, Ending)> {
        let first = self.since.is_none();
        let since = *self
            .since
            .get_or_insert_with(|| ms(&page.generated_at).unwrap_or(f64::INFINITY));
        let mut news = Vec::new();
        for card in page.cards.iter().filter(|c| c.owner.sub == viewer) {
            let Some((ending, at)) = ending(card) else {
                continue;
            };
            if self
                .told
                .iter()
                .any(|(id, e)| *id == card.id && *e == ending)
            {
                continue;
            }
            // Seen ended on the first page: told, whatever its time says (the server that
            // wrote it may have a clock ahead of the one that made the page).
            self.told.push((card.id.clone(), ending));
            if !first && ms(at).is_some_and(|at| at > since) {
                news.push((card.clone(), ending));
            }
        }
        news
    }
}

/// How `card` ended, and when (its time as the card writes it), if it did.
fn ending(card: &Card) -> Option<(Ending, &str)> {
    if card.status.is_finished() {
        Some((
            Ending::Finished,
            card.finished_at.as_deref().unwrap_or(&card.updated_at),
        ))
    } else if card.stalled {
        Some((Ending::Stalled, card.stalled_at.as_deref()?))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{Owner, Status};

    fn card(id: &str, owner: &str, status: Status, at: &str) -> Card {
        let finished = status.is_finished();
        Card {
            id: id.into(),
            key: id.into(),
            title: id.into(),
            status,
            stalled: status == Status::Running && !at.is_empty(),
            stalled_at: (status == Status::Running && !at.is_empty()).then(|| at.into()),
            owner: Owner {
                sub: owner.into(),
                name: owner.into(),
            },
            created_at: "1".into(),
            updated_at: "1".into(),
            finished_at: finished.then(|| at.into()),
            ..Card::default()
        }
    }

    fn page(at: &str, cards: Vec<Card>) -> RecentPage {
        RecentPage {
            cards,
            more: false,
            partial: false,
            generated_at: at.into(),
        }
    }

    fn ms(t: &str) -> Option<f64> {
        t.parse().ok()
    }

    fn ids(news: Vec<(Card, Ending)>) -> Vec<(String, Ending)> {
        news.into_iter().map(|(c, e)| (c.id, e)).collect()
    }

    #[test]
    fn an_own_item_that_ends_is_told_once() {
        let mut e = Endings::default();
        let running = card("a", "me", Status::Running, "");
        assert!(e.news(&page("100", vec![running]), "me", ms).is_empty());
        let done = card("a", "me", Status::Failed, "150");
        assert_eq!(
            ids(e.news(&page("160", vec![done.clone()]), "me", ms)),
            vec![("a".into(), Ending::Finished)]
        );
        assert!(e.news(&page("170", vec![done]), "me", ms).is_empty());
    }

    #[test]
    fn what_had_ended_before_the_first_page_is_not_news() {
        let mut e = Endings::default();
        let old = card("a", "me", Status::Succeeded, "90");
        assert!(e.news(&page("100", vec![old.clone()]), "me", ms).is_empty());
        // Shown again later (after a dismissal elsewhere, say): still not news.
        let older = card("b", "me", Status::Succeeded, "80");
        assert!(e.news(&page("120", vec![old, older]), "me", ms).is_empty());
        // Even with a time after the first page's (another server's clock ahead).
        let mut e = Endings::default();
        let skewed = card("c", "me", Status::Cancelled, "105");
        assert!(e
            .news(&page("100", vec![skewed.clone()]), "me", ms)
            .is_empty());
        assert!(e.news(&page("110", vec![skewed]), "me", ms).is_empty());
    }

    #[test]
    fn an_item_that_appears_already_ended_is_news() {
        let mut e = Endings::default();
        assert!(e.news(&page("100", vec![]), "me", ms).is_empty());
        let quick = card("q", "me", Status::Succeeded, "130");
        assert_eq!(
            ids(e.news(&page("140", vec![quick]), "me", ms)),
            vec![("q".into(), Ending::Finished)]
        );
    }

    #[test]
    fn only_the_viewers_own_items() {
        let mut e = Endings::default();
        assert!(e.news(&page("100", vec![]), "me", ms).is_empty());
        let theirs = card("t", "bob", Status::Failed, "130");
        assert!(e.news(&page("140", vec![theirs]), "me", ms).is_empty());
    }

    #[test]
    fn a_stall_then_its_end_are_each_told() {
        let mut e = Endings::default();
        assert!(e.news(&page("100", vec![]), "me", ms).is_empty());
        let stalled = card("s", "me", Status::Running, "120");
        assert_eq!(
            ids(e.news(&page("130", vec![stalled.clone()]), "me", ms)),
            vec![("s".into(), Ending::Stalled)]
        );
        assert!(e.news(&page("135", vec![stalled]), "me", ms).is_empty());
        let failed = card("s", "me", Status::Failed, "140");
        assert_eq!(
            ids(e.news(&page("150", vec![failed]), "me", ms)),
            vec![("s".into(), Ending::Finished)]
        );
    }
}
