//! The widget's components. The card, the header, the frame around them and the list's notes
//! are drawn by the widget in the browser, and by [`drawing`] on the server: the first page,
//! drawn before the wasm has arrived, with the same components, so the two cannot differ.

mod card;
mod frame;
mod header;

#[cfg(feature = "ssr")]
pub mod drawing;

#[cfg(feature = "csr")]
mod live;
#[cfg(feature = "csr")]
mod states;
#[cfg(feature = "csr")]
mod stream;
#[cfg(feature = "csr")]
mod widget;

#[cfg(feature = "csr")]
pub use widget::{Widget, WidgetConfig};
