//! The first page drawn by the server (`GET /api/v1/workspaces/{ws}/drawing`): the widget's own
//! components render it (`app::components::drawing`), so the page a loader shows before the wasm
//! has arrived is the page the widget then draws. The answer carries the page (the one `/recent`
//! answers, from the same read cache) and the viewer's last look beside it: the widget takes
//! both as its first calls' answers, and the drawing marks what changed since, as the widget does.

use super::extract::{recent_query, RecentQuery, RecentQueryResult};
use super::state::AppState;
use crate::auth::{Authorized, Read};
use crate::error::Error;
use app::contract::names::route;
use app::contract::{ApiError, Drawing};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;

#[utoipa::path(
    get,
    path = route::DRAWING,
    tag = "recent",
    summary = "The caller's first page, drawn as the widget draws it (for the widget's loaders)",
    params(("ws" = String, Path, description = "The workspace"), RecentQuery),
    responses(
        (status = 200, description = "The page, the caller's last look, and the widget's markup for them (English labels; each `<time>` carries `data-ago` for the browser to word; null when the page has no card)", body = Drawing),
        (status = 400, description = "`invalid_body` (the query; `before` and `views` are not taken)", body = ApiError),
        (status = 401, description = "`unauthenticated`", body = ApiError),
        (status = 403, description = "`forbidden`", body = ApiError),
        (status = 503, description = "`store_unavailable`", body = ApiError),
    ),
)]
pub(super) async fn drawing(
    State(s): State<AppState>,
    who: Authorized<Read>,
    q: RecentQueryResult,
) -> Result<Response, Error> {
    let q = recent_query(q)?;
    if q.views.is_some() || q.before.is_some() {
        return Err(Error::MalformedBody(
            "a drawing is of the first page: filter and cap only".into(),
        ));
    }
    let (page, looked) = tokio::try_join!(
        s.pickup.recent_page(&who, q.filter, q.cap, None),
        s.pickup.looked(&who)
    )?;
    // Only the words "3 min. ago" are counted from this clock, until the widget words them.
    let now_ms = chrono::Utc::now().timestamp_millis() as f64;
    let html = app::components::drawing::drawing(&page, q.filter, looked.at.as_deref(), now_ms);
    let page = page.into_page();
    Ok((
        [(header::CACHE_CONTROL, "no-store")],
        Json(Drawing { page, looked, html }),
    )
        .into_response())
}
