//! The server's JSON answers, as the browser parsed them (`Response.json()`, `JSON.parse`), read
//! into the model. The browser's parser does the parsing: a JSON parser compiled into the wasm,
//! with serde's code for each type, was a tenth of the widget's bytes (issue 16). The shapes are
//! the contract's serde shapes, and app/tests/contract_js.rs holds the names read here to
//! the names serde writes.
//!
//! A page is read whole or not at all, as serde would: a card with a missing or mistyped field
//! makes the page unreadable (`None`), never a page with that card silently left out.

use crate::contract::{ApiError, Card, ErrorCode, Owner, RecentPage, Status};
use wasm_bindgen::{JsCast, JsValue};

/// A page of cards.
pub fn page(v: &JsValue) -> Option<RecentPage> {
    let o = Object(v);
    let cards = o.get("cards").dyn_into::<js_sys::Array>().ok()?;
    Some(RecentPage {
        cards: cards.iter().map(|c| card(&c)).collect::<Option<_>>()?,
        more: o.bool("more")?,
        partial: o.bool("partial")?,
        generated_at: o.string("generated_at")?,
    })
}

/// The error the server answered with: `{"error": "<code>", "message": "…"}`. A code this
/// version does not know is shown as a failure of the call, with the server's message.
pub fn error(v: &JsValue) -> Option<ApiError> {
    let o = Object(v);
    let code = o.string("error")?;
    Some(ApiError::new(
        ErrorCode::from_wire(&code).unwrap_or(ErrorCode::Transport),
        o.string("message")?,
    ))
}

fn card(v: &JsValue) -> Option<Card> {
    let o = Object(v);
    let owner = Object(&o.get("owner"));
    Some(Card {
        id: o.string("id")?,
        key: o.string("key")?,
        title: o.string("title")?,
        url: o.optional(Object::string, "url")?,
        status: Status::from_wire(&o.string("status")?),
        stalled: o.bool("stalled")?,
        progress: o.optional(Object::number, "progress")?,
        owner: Owner {
            sub: owner.string("sub")?,
            name: owner.string("name")?,
        },
        created_at: o.string("created_at")?,
        updated_at: o.string("updated_at")?,
        finished_at: o.optional(Object::string, "finished_at")?,
    })
}

/// A parsed JSON object's fields, each `None` when missing or of another type.
struct Object<'a>(&'a JsValue);

impl Object<'_> {
    fn get(&self, name: &str) -> JsValue {
        if !self.0.is_object() {
            return JsValue::UNDEFINED;
        }
        js_sys::Reflect::get(self.0, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
    }

    fn string(&self, name: &str) -> Option<String> {
        self.get(name).as_string()
    }

    fn bool(&self, name: &str) -> Option<bool> {
        self.get(name).as_bool()
    }

    fn number(&self, name: &str) -> Option<f64> {
        self.get(name).as_f64()
    }

    /// `Some(None)` for null or a missing field (as serde reads an `Option`), `None` for a
    /// value of another type.
    fn optional<T>(&self, read: fn(&Self, &str) -> Option<T>, name: &str) -> Option<Option<T>> {
        if self.get(name).is_null_or_undefined() {
            Some(None)
        } else {
            read(self, name).map(Some)
        }
    }
}
