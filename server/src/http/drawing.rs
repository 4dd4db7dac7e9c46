//! The first page drawn by the server (`GET /api/v1/workspaces/{ws}/drawing`): the widget's own
//! components render it (`app::components::drawing`), so the page a loader shows before the wasm
//! has arrived is the page the widget then draws. The page is the one `/recent` answers, from
//! the same read cache: a loader asks for both at once, and the store is read once.

use super::extract::{recent_query, RecentQuery, RecentQueryResult};
use super::state::AppState;
use crate::auth::{Authorized, Read};
use crate::error::Error;
use app::contract::names::route;
use app::contract::ApiError;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

#[utoipa::path(
    get,
    path = route::DRAWING,
    tag = "recent",
    summary = "The caller's first page, drawn as the widget draws it (for the widget's loaders)",
    params(("ws" = String, Path, description = "The workspace"), RecentQuery),
    responses(
        (status = 200, description = "The widget's markup for the page, English labels; each `<time>` carries `data-ago` for the browser to word", content_type = "text/html", body = String),
        (status = 204, description = "The page has no cards: nothing to draw ahead"),
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
    let page = s.pickup.recent_page(&who, q.filter, q.cap, None).await?;
    // Only the words "3 min. ago" are counted from this clock, until the widget words them.
    let now_ms = chrono::Utc::now().timestamp_millis() as f64;
    Ok(
        match app::components::drawing::drawing(&page, q.filter, now_ms) {
            Some(html) => (
                [
                    (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                    (header::CACHE_CONTROL, "no-store"),
                ],
                html,
            )
                .into_response(),
            None => StatusCode::NO_CONTENT.into_response(),
        },
    )
}
