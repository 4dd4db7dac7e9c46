//! A page read from a parsed JSON object, field by field, beside the shapes it reads: the
//! widget reads its answers from what the browser's `JSON.parse` made (`decode.rs`), because a
//! JSON parser and serde's code compiled into the wasm were a tenth of its bytes. Here, so that
//! a new field of a card is written in the contract once, with its reading next to it, and
//! `cargo test` reads pages serde wrote (below) the way the widget does.
//!
//! A card's title and owner's name are read as the widget shows them, without control or
//! bidirectional-control characters (`link::shown_text`): every path a title takes to the
//! viewer (the card, the announcement, `pickup:finished`, a notification) starts here.
//!
//! Read whole or not at all, as serde would: a card with a missing or mistyped field makes the
//! page unreadable (`None`), never a page with that card silently left out.

use super::link::shown_text;
use super::{ApiError, Card, ErrorCode, Filter, Owner, RecentPage, Status};

/// A parsed JSON object's fields, each `None` when missing or of another type.
pub trait Fields: Sized {
    fn string(&self, name: &str) -> Option<String>;
    fn bool(&self, name: &str) -> Option<bool>;
    fn number(&self, name: &str) -> Option<f64>;
    /// Null or missing (as serde reads an `Option`).
    fn absent(&self, name: &str) -> bool;
    fn object(&self, name: &str) -> Self;
    fn array(&self, name: &str) -> Option<Vec<Self>>;

    /// `Some(None)` for null or missing, `None` for a value of another type.
    fn optional<T>(&self, read: fn(&Self, &str) -> Option<T>, name: &str) -> Option<Option<T>> {
        if self.absent(name) {
            Some(None)
        } else {
            read(self, name).map(Some)
        }
    }
}

impl RecentPage {
    pub fn read(o: &impl Fields) -> Option<RecentPage> {
        Some(RecentPage {
            cards: o
                .array("cards")?
                .iter()
                .map(Card::read)
                .collect::<Option<_>>()?,
            more: o.bool("more")?,
            partial: o.bool("partial")?,
            generated_at: o.string("generated_at")?,
        })
    }

    /// A page of a live stream or a call: the page, and the view it names (`filter` and `cap`,
    /// on a stream of several views; see [`RecentPage::for_view`]).
    pub fn read_live(o: &impl Fields) -> Option<(RecentPage, Option<(Filter, u32)>)> {
        let view = match (o.string("filter"), o.number("cap")) {
            (Some(filter), Some(cap)) => Some((Filter::from_wire(&filter)?, cap as u32)),
            _ => None,
        };
        Some((RecentPage::read(o)?, view))
    }
}

impl Card {
    pub fn read<F: Fields>(o: &F) -> Option<Card> {
        let owner = o.object("owner");
        Some(Card {
            id: o.string("id")?,
            key: o.string("key")?,
            title: shown_text(&o.string("title")?),
            url: o.optional(F::string, "url")?,
            status: Status::from_wire(&o.string("status")?),
            stalled: o.bool("stalled")?,
            stalled_at: o.optional(F::string, "stalled_at")?,
            progress: o.optional(F::number, "progress")?,
            owner: Owner {
                sub: owner.string("sub")?,
                name: shown_text(&owner.string("name")?),
            },
            created_at: o.string("created_at")?,
            updated_at: o.string("updated_at")?,
            finished_at: o.optional(F::string, "finished_at")?,
        })
    }
}

impl ApiError {
    /// The error the server answered with: `{"error": "<code>", "message": "…"}`. A code this
    /// version does not know is shown as a failure of the call, with the server's message.
    pub fn read(o: &impl Fields) -> Option<ApiError> {
        let code = o.string("error")?;
        Some(ApiError::new(
            ErrorCode::from_wire(&code).unwrap_or(ErrorCode::Transport),
            o.string("message")?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::Fields;
    use crate::contract::{ApiError, Card, ErrorCode, Owner, RecentPage, Status};
    use serde_json::Value;

    /// serde_json's parse, read as the widget reads the browser's.
    struct Json(Value);

    impl Fields for Json {
        fn string(&self, name: &str) -> Option<String> {
            self.0.get(name)?.as_str().map(str::to_string)
        }
        fn bool(&self, name: &str) -> Option<bool> {
            self.0.get(name)?.as_bool()
        }
        fn number(&self, name: &str) -> Option<f64> {
            self.0.get(name)?.as_f64()
        }
        fn absent(&self, name: &str) -> bool {
            self.0.get(name).is_none_or(Value::is_null)
        }
        fn object(&self, name: &str) -> Json {
            Json(self.0.get(name).cloned().unwrap_or(Value::Null))
        }
        fn array(&self, name: &str) -> Option<Vec<Json>> {
            Some(
                self.0
                    .get(name)?
                    .as_array()?
                    .iter()
                    .cloned()
                    .map(Json)
                    .collect(),
            )
        }
    }

    fn card(all: bool) -> Card {
        Card {
            id: "1_a".into(),
            key: "a".into(),
            title: "T".into(),
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
    fn a_card_missing_a_field_makes_the_page_unreadable() {
        let mut value = serde_json::to_value(RecentPage {
            cards: vec![card(true)],
            more: false,
            partial: false,
            generated_at: "g".into(),
        })
        .unwrap();
        value["cards"][0].as_object_mut().unwrap().remove("key");
        assert_eq!(RecentPage::read(&Json(value)), None);
    }
}
