//! The server's JSON answers, as the browser parsed them (`Response.json()`, `JSON.parse`), read
//! into the contract's shapes by the contract's own readers (`contract::read`): the browser's
//! parser does the parsing, since a JSON parser compiled into the wasm, with serde's code for
//! each type, was a tenth of the widget's bytes (issue 16).

use crate::contract::read::{Fields, Readable};
use crate::contract::{ApiError, Filter, LastLook, RecentPage};
use wasm_bindgen::{JsCast, JsValue};

/// A page of cards, as a widget of `filter` and `cap` cards shows it: a call's answer, or a
/// live stream's page, which may be of a larger view shared by the browser's widgets
/// ([`RecentPage::for_view`]).
pub fn page(v: &JsValue, filter: Filter, cap: u32) -> Option<RecentPage> {
    let (page, view) = RecentPage::read_live(&Object(v.clone()))?;
    page.for_view(view, filter, cap)
}

/// A viewer's last look.
pub fn look(v: &JsValue) -> Option<LastLook> {
    LastLook::read(&Object(v.clone()))
}

/// The error the server answered with.
pub fn error(v: &JsValue) -> Option<ApiError> {
    ApiError::read(&Object(v.clone()))
}

/// A parsed JSON value, read as an object.
struct Object(JsValue);

impl Object {
    fn get(&self, name: &str) -> JsValue {
        if !self.0.is_object() {
            return JsValue::UNDEFINED;
        }
        js_sys::Reflect::get(&self.0, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
    }
}

impl Fields for Object {
    fn string(&self, name: &str) -> Option<String> {
        self.get(name).as_string()
    }

    fn bool(&self, name: &str) -> Option<bool> {
        self.get(name).as_bool()
    }

    fn number(&self, name: &str) -> Option<f64> {
        self.get(name).as_f64()
    }

    fn absent(&self, name: &str) -> bool {
        self.get(name).is_null_or_undefined()
    }

    fn object(&self, name: &str) -> Object {
        Object(self.get(name))
    }

    fn array(&self, name: &str) -> Option<Vec<Object>> {
        let array = self.get(name).dyn_into::<js_sys::Array>().ok()?;
        Some(array.iter().map(Object).collect())
    }
}
