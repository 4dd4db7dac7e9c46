//! The wire contract: every shape, name and rule that the server, the widget and the producer
//! client share, in one place. The server's doors, the widget and `pickup run` import it from
//! here; `public/contract.js`, `public/pickup.d.ts` and `public/custom-elements.json` are
//! generated from it (`app/tests/contract_js.rs`, `app/tests/element_types.rs`), and
//! `cargo test` fails while any of them differs.
//!
//! - [`page`]: a page of cards (`recent`, the live stream, the server functions' answer), and
//!   the first page with its drawing;
//! - [`item`]: the REST API's bodies and the item record (server side, feature `ssr`);
//! - [`error`]: the one error body, `{"error": "<code>", "message": "…"}`, and its status;
//! - [`look`]: a viewer's last look at a workspace, and what changed since;
//! - [`link`]: which links a card may carry, the rule of both the write and the card;
//! - [`cap`]: a page's number of cards, and the one rule every door judges it by;
//! - [`read`]: a page and an error read field by field from a parsed JSON object (the widget's
//!   way, without serde in the wasm);
//! - [`names`]: routes, the live stream's events, the element's DOM events, header names,
//!   and the keys the widget reads from a page;
//! - [`element`]: `<pickup-recent>`'s attributes, properties, events, parts and custom
//!   properties, as its typings and manifest describe them.

pub mod cap;
pub mod element;
pub mod error;
#[cfg(feature = "ssr")]
pub mod item;
pub mod link;
pub mod look;
pub mod names;
pub mod page;
pub mod read;

pub use cap::{Cap, DEFAULT_CAP, MAX_CAP, MIN_CAP};
pub use error::{ApiError, ErrorCode};
#[cfg(feature = "ssr")]
pub use item::{
    stored_text, stored_url, ItemRecord, ItemUpdate, NewItem, MAX_NAME_CHARS, MAX_TITLE_CHARS,
};
pub use link::MAX_URL_CHARS;
pub use look::{LastLook, Since};
pub use names::{DomEvent, LiveEvent, EXPIRES_IN, TOKEN_EXPIRES, VIEWER};
pub use page::{Card, Drawing, Filter, Owner, Pins, RecentPage, Status, ViewPage};
