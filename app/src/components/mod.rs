//! The widget's components. The card, the header, the frame around them and the list's notes
//! are drawn by the widget in the browser, and by [`drawing`] on the server: the first page,
//! drawn before the wasm has arrived, with the same components, so the two cannot differ.

mod card;
mod frame;
mod header;
mod icon;

#[cfg(feature = "ssr")]
pub mod drawing;

#[cfg(feature = "csr")]
mod bell;
#[cfg(feature = "csr")]
mod live;
#[cfg(feature = "csr")]
mod since;
#[cfg(feature = "csr")]
mod states;
#[cfg(feature = "csr")]
mod stream;
#[cfg(feature = "csr")]
mod widget;
// The widget's parts, beside it, not in a folder: app/tests/element_types.rs reads this folder's
// files (not its subfolders) for the parts they name.
#[cfg(feature = "csr")]
mod widget_body;
#[cfg(feature = "csr")]
mod widget_fetches;
#[cfg(feature = "csr")]
mod widget_state;
#[cfg(feature = "csr")]
mod widget_upkeep;

#[cfg(feature = "csr")]
pub use widget::{Widget, WidgetConfig};
