//! A viewer's pins at the REST door: the list (`GET …/pins`), and one pin (`PUT` and `DELETE
//! …/pins/{id}`). The viewer is always the token's user: no token reads or writes another's.

use super::extract::Names;
use super::state::AppState;
use crate::auth::{Authorized, Read};
use crate::error::Error;
use app::contract::names::route;
use app::contract::{ApiError, Pins};
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;

#[utoipa::path(
    get,
    path = route::PINS,
    tag = "recent",
    summary = "The items the caller pinned",
    description = "Newest first, the caller's own: the items kept at the top of their page, \
                   above its cap, in Mine and Everyone, on every device.",
    params(("ws" = String, Path, description = "The workspace")),
    responses(
        (status = 200, description = "The caller's pins", body = Pins),
        (status = 400, description = "`invalid_name`", body = ApiError),
        (status = 401, description = "`unauthenticated`", body = ApiError),
        (status = 403, description = "`forbidden`", body = ApiError),
        (status = 503, description = "`store_unavailable`", body = ApiError),
    ),
)]
pub(super) async fn pins(
    State(s): State<AppState>,
    who: Authorized<Read>,
) -> Result<Json<Pins>, Error> {
    Ok(Json(s.pickup.pins(&who).await?))
}

#[utoipa::path(
    put,
    path = route::PIN,
    tag = "recent",
    summary = "Pin an item for the caller",
    description = "At most 10 per caller and workspace: the 11th is `too_many_pins` (409), and \
                   nothing is written. Pinning a pinned item again is fine.",
    params(
        ("ws" = String, Path, description = "The workspace"),
        ("id" = String, Path, description = "The item's id"),
    ),
    responses(
        (status = 204, description = "Pinned"),
        (status = 400, description = "`invalid_name`", body = ApiError),
        (status = 401, description = "`unauthenticated`", body = ApiError),
        (status = 403, description = "`forbidden`", body = ApiError),
        (status = 404, description = "`not_found`: no such item", body = ApiError),
        (status = 409, description = "`too_many_pins`", body = ApiError),
        (status = 503, description = "`store_unavailable`", body = ApiError),
    ),
)]
pub(super) async fn pin(
    State(s): State<AppState>,
    who: Authorized<Read>,
    Names((_, id)): Names<(String, String)>,
) -> Result<StatusCode, Error> {
    let id = s.pickup.item_id(&id)?;
    s.pickup.pin_item(&who, id, true).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    delete,
    path = route::PIN,
    tag = "recent",
    summary = "Unpin an item for the caller",
    description = "Unpinning what is not pinned is fine.",
    params(
        ("ws" = String, Path, description = "The workspace"),
        ("id" = String, Path, description = "The item's id"),
    ),
    responses(
        (status = 204, description = "Unpinned"),
        (status = 400, description = "`invalid_name`", body = ApiError),
        (status = 401, description = "`unauthenticated`", body = ApiError),
        (status = 403, description = "`forbidden`", body = ApiError),
        (status = 503, description = "`store_unavailable`", body = ApiError),
    ),
)]
pub(super) async fn unpin(
    State(s): State<AppState>,
    who: Authorized<Read>,
    Names((_, id)): Names<(String, String)>,
) -> Result<StatusCode, Error> {
    let id = s.pickup.item_id(&id)?;
    s.pickup.pin_item(&who, id, false).await?;
    Ok(StatusCode::NO_CONTENT)
}
