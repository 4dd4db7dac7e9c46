//! "Show older": the older pages a viewer asked for, kept below the first page while the first
//! page refreshes. Pure, so it is tested without a browser.

use crate::contract::Card;

/// The older cards to show below the first page's `first`: each once, none of a key the first
/// page shows (its newer run is there). `older` comes newest first already (each page is older
/// than the card before it), so nothing is sorted: a sort would cost the widget kilobytes, as
/// would a hash set (a few hundred cards at most are compared).
pub fn below(first: &[Card], older: impl IntoIterator<Item = Card>) -> Vec<Card> {
    let mut shown: Vec<Card> = Vec::new();
    for card in older {
        let key = card.key.as_str();
        if !first.iter().chain(&shown).any(|c| c.key == key) {
            shown.push(card);
        }
    }
    shown
}

/// The older cards after the first page refreshed from `before` to `after`: the cards that fell
/// off its end (newer items pushed them down) join them, so nothing shown vanishes into the gap
/// between the pages; a card gone from inside the first page is gone (finished long ago, removed).
pub fn refreshed(older: Vec<Card>, before: &[Card], after: &[Card]) -> Vec<Card> {
    let last = after.last().map(|c| c.id.as_str());
    let fell = before
        .iter()
        .filter(|c| last.is_none_or(|l| c.id.as_str() > l))
        .cloned();
    below(after, fell.chain(older))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{Owner, Status};

    fn card(id: &str) -> Card {
        Card {
            id: id.into(),
            key: id.split_once('_').unwrap().1.into(),
            title: id.into(),
            status: Status::Running,
            owner: Owner {
                sub: "a".into(),
                name: "A".into(),
            },
            created_at: String::new(),
            updated_at: String::new(),
            ..Card::default()
        }
    }

    fn ids(cards: &[Card]) -> Vec<&str> {
        cards.iter().map(|c| c.id.as_str()).collect()
    }

    #[test]
    fn appended_pages_are_ordered_without_duplicates_or_keys_already_shown() {
        let first = [card("1_a"), card("2_b")];
        let older = below(&first, [card("3_c"), card("4_d")]);
        let older = below(
            &first,
            older
                .into_iter()
                .chain([card("4_d"), card("5_a"), card("6_e")]),
        );
        assert_eq!(ids(&older), ["3_c", "4_d", "6_e"]);
    }

    #[test]
    fn cards_pushed_off_the_first_page_join_the_older_ones() {
        let before = [card("2_b"), card("3_c"), card("4_d")];
        // A new item arrived (1_a) and 2_b finished long ago: 4_d fell off the end.
        let after = [card("1_a"), card("3_c")];
        let older = refreshed(vec![card("5_e")], &before, &after);
        assert_eq!(ids(&older), ["4_d", "5_e"]);
        // A new run of an older card's key: shown on the first page only.
        let older = refreshed(older, &after, &[card("0_e"), card("1_a")]);
        assert_eq!(ids(&older), ["3_c", "4_d"]);
    }
}
