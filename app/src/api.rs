//! The widget's server functions, under pinned names so their URLs never change between builds:
//! `POST /api/recent`, `/api/dismiss`, `/api/looked` and `/api/look`, with JSON arguments. The widget calls them with the browser's `fetch`
//! (see `client`), not server_fn's client; on the server they call the [`Service`] the server put in context, the
//! same code the REST routes call.
//!
//! [`Service`]: crate::service::Service

use crate::contract::{ApiError, Filter, LastLook, RecentPage};
use leptos::prelude::*;
// JSON arguments, not server_fn's default form encoding: the widget already parses JSON, so
// the form codec (serde_qs) would be bytes shipped for nothing.
use leptos::server_fn::codec::Json;

#[cfg(feature = "ssr")]
use crate::service::{Bearer, ServiceHandle};

/// The newest items of `ws` that the viewer may see; with `before` (the last id of the page
/// the viewer has), the next page of older ones.
#[server(prefix = "/api", endpoint = "recent", input = Json)]
pub async fn recent(
    ws: String,
    filter: Filter,
    cap: Option<u32>,
    before: Option<String>,
) -> Result<RecentPage, ApiError> {
    let (svc, bearer) = service()?;
    svc.0
        .recent(bearer.0.as_deref(), &ws, filter, cap, before.as_deref())
        .await
}

/// Hide one item for this viewer only.
#[server(prefix = "/api", endpoint = "dismiss", input = Json)]
pub async fn dismiss(ws: String, id: String) -> Result<(), ApiError> {
    let (svc, bearer) = service()?;
    svc.0.dismiss(bearer.0.as_deref(), &ws, &id).await
}

/// Pin (`pinned`) or unpin one item for this viewer only: it stays at the top of their page.
#[server(prefix = "/api", endpoint = "pin", input = Json)]
pub async fn pin(ws: String, id: String, pinned: bool) -> Result<(), ApiError> {
    let (svc, bearer) = service()?;
    svc.0.pin(bearer.0.as_deref(), &ws, &id, pinned).await
}

/// The viewer's last look at `ws` ("since you looked" counts from it).
#[server(prefix = "/api", endpoint = "looked", input = Json)]
pub async fn looked(ws: String) -> Result<LastLook, ApiError> {
    let (svc, bearer) = service()?;
    svc.0.looked(bearer.0.as_deref(), &ws).await
}

/// The viewer looked at `ws` as it was at `at` (the `generated_at` of the page on screen): kept
/// as the viewer's last look, never later than the server's now. Answers the look kept.
#[server(prefix = "/api", endpoint = "look", input = Json)]
pub async fn look(ws: String, at: String) -> Result<LastLook, ApiError> {
    let (svc, bearer) = service()?;
    svc.0.look(bearer.0.as_deref(), &ws, &at).await
}

#[cfg(feature = "ssr")]
fn service() -> Result<(ServiceHandle, Bearer), ApiError> {
    use crate::contract::ErrorCode;
    match (use_context::<ServiceHandle>(), use_context::<Bearer>()) {
        (Some(s), Some(b)) => Ok((s, b)),
        _ => Err(ApiError::new(
            ErrorCode::StoreUnavailable,
            "the server did not provide the Pickup service to this request",
        )),
    }
}
