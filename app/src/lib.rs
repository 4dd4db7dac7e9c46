//! The Pickup widget and the contract it shares with the server.
//!
//! - [`contract`]: everything that crosses the wire (pages, REST bodies, errors, the cap rule,
//!   routes and names), the one home the server and the producer client import too.
//! - [`api`]: the server functions (`/api/recent`, `/api/dismiss`). In the browser they are
//!   HTTP calls; on the server (`ssr`) they call the [`service::Service`] the server provides.
//! - [`older`]: how pages fetched with "Show older" sit below the refreshing first page.
//! - [`options`]: the one rule for the widget's numeric options (cap, refresh) from host pages.
//! - [`labels`]: every word the widget shows, English by default, replaceable by the host.
//! - [`relative`]: which unit a card's relative time is in (the browser's `Intl` words it).
//! - [`renewal`]: when the widget asks the host's `getToken` for a new token.
//! - [`finished`]: which of the viewer's own items ended while a widget watched.
//! - [`components`]: the widget itself (feature `csr`), and the first page's drawing that the
//!   server makes with the same components (feature `ssr`).

pub mod api;
pub mod contract;
pub mod finished;
pub mod labels;
pub mod older;
pub mod options;
pub mod relative;
pub mod renewal;

#[cfg(feature = "ssr")]
pub mod service;

#[cfg(feature = "csr")]
mod client;
#[cfg(any(feature = "csr", feature = "ssr"))]
pub mod components;
#[cfg(feature = "csr")]
mod decode;
#[cfg(feature = "csr")]
mod host;
#[cfg(feature = "csr")]
mod mount;
