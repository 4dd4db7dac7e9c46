//! The HTTP doors: everything between a socket and the service ([`crate::service`]).
//!
//! - `router`: the whole surface as one axum `Router`, and the layers every answer passes;
//! - `routes` (REST, with its OpenAPI document from `openapi`), `sse` (live streams) and
//!   `server_fns` (the widget's calls): the doors, each a thin handler over the service;
//! - `drawing`: the first page drawn by the widget's components, for its loaders;
//! - `extract`: what a handler takes from a request, the verified caller among it;
//! - `site`: the widget's static files; `policy`: CSP and CORS from the operator's settings.

mod drawing;
mod extract;
mod openapi;
mod pins;
mod policy;
mod router;
mod routes;
mod server_fns;
mod site;
mod sse;
mod state;

pub(crate) use policy::{allowed_origins, frame_ancestors};
pub(crate) use router::{router, HttpConfig};
