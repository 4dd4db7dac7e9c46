//! The REST routes of the contract (`/api/v1`), each with its OpenAPI description, and the
//! health checks. Handlers take an [`Authorized`] caller and typed names, call the service,
//! and shape its answer; they decide nothing themselves.

use super::extract::{recent_query, JsonBody, Names, RecentQuery, RecentQueryResult};
use super::state::AppState;
use crate::auth::{Authorized, Read, Write};
use crate::error::Error;
use crate::service::Readiness;
use app::contract::names::route;
use app::contract::{ApiError, ItemRecord, ItemUpdate, LastLook, NewItem, RecentPage};
use axum::body::Bytes;
use axum::extract::{FromRequest, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The document, serialised once when the router is built (a clone shares the bytes).
#[derive(Clone)]
pub(super) struct OpenApiJson(pub(super) Bytes);

#[utoipa::path(
    get,
    path = route::OPENAPI,
    tag = "meta",
    summary = "This document (no token needed)",
    security(()),
    responses((status = 200, description = "The OpenAPI 3.1 document of this API", content_type = "application/json", body = Object)),
)]
pub(super) async fn openapi_json(axum::Extension(doc): axum::Extension<OpenApiJson>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], doc.0).into_response()
}

pub(super) async fn no_such_route() -> Error {
    Error::MalformedPath(
        "no such route: names cannot contain '/' or be empty; see the API in the README".into(),
    )
}

pub(super) async fn readyz(State(s): State<AppState>) -> Response {
    match s.pickup.ready().await {
        Readiness::Ready { clock: None, live } => {
            (StatusCode::OK, format!("ready{live}")).into_response()
        }
        // Still ready (reads are right, writes are dated by the store's clock), but an operator
        // should fix the clock.
        Readiness::Ready {
            clock: Some(clock),
            live,
        } => (StatusCode::OK, format!("ready; {clock}{live}")).into_response(),
        Readiness::Refused { refusal, detail } => {
            let id = crate::error::request_id();
            tracing::error!(request_id = %id, error = %detail, "readyz: the store refused");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "the store refused: {refusal} (request id {id}; the log has the store's answer)"
                ),
            )
                .into_response()
        }
        Readiness::Unanswered { detail } => {
            // The detail (paths, endpoints) goes to the log only.
            let id = crate::error::request_id();
            tracing::error!(request_id = %id, error = %detail, "readyz: the store did not answer");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("store not answering (request id {id})"),
            )
                .into_response()
        }
    }
}

/// A write's answer says when the TTL deletes this run by its name
/// ([`crate::service::Pickup::expires_in`]), so a producer can renew it in time.
fn with_expiry(mut res: Response, s: &AppState, record: &ItemRecord) -> Response {
    if let Ok(id) = crate::index::ItemId::parse(&record.id) {
        let left = s.pickup.expires_in(&id).as_secs();
        res.headers_mut()
            .insert(app::contract::EXPIRES_IN, HeaderValue::from(left));
    }
    res
}

fn with_etag(body: impl IntoResponse, status: StatusCode, e_tag: Option<String>) -> Response {
    let mut res = (status, body).into_response();
    if let Some(v) = e_tag.and_then(|t| HeaderValue::from_str(&t).ok()) {
        res.headers_mut().insert(header::ETAG, v);
    }
    res
}

#[utoipa::path(
    post,
    path = route::ITEMS,
    tag = "items",
    summary = "Register an item",
    description = "A new run of `key`: its id is chosen by the server. Needs the write scope; \
                   the caller becomes the item's owner.",
    params(("ws" = String, Path, description = "The workspace: 1 to 63 of a-z, 0-9 and '-', starting with a letter or digit")),
    request_body = NewItem,
    responses(
        (status = 201, description = "Registered: the record", body = ItemRecord, headers(
            ("Pickup-Expires-In" = u64, description = "Seconds until PICKUP_TTL deletes this run by its name, heartbeats or not: to keep an item longer, register its key again before then"),
        )),
        (status = 400, description = "`invalid_name` or `invalid_body`", body = ApiError),
        (status = 401, description = "`unauthenticated`", body = ApiError),
        (status = 403, description = "`forbidden`: not a member, or a read-only token", body = ApiError),
        (status = 409, description = "`conflict`: every id tried for the key was taken; send it again", body = ApiError),
        (status = 413, description = "`too_large`: a body over 64 KiB", body = ApiError),
        (status = 503, description = "`store_unavailable`", body = ApiError),
    ),
)]
pub(super) async fn register(
    State(s): State<AppState>,
    who: Result<Authorized<Write>, Error>,
    req: Request,
) -> Result<Response, Error> {
    let refused = |e: Error| {
        // A refusal counts here, before the write; the service counts the writes.
        crate::metrics::registration(Err(e.code()));
        e
    };
    let who = who.map_err(refused)?;
    let JsonBody(item) = JsonBody::<NewItem>::from_request(req, &())
        .await
        .map_err(refused)?;
    let registered = s.pickup.register(&who, item).await?;
    let res = (StatusCode::CREATED, Json(&registered)).into_response();
    Ok(with_expiry(res, &s, &registered))
}

#[utoipa::path(
    put,
    path = route::ITEM,
    tag = "items",
    summary = "Update an item (its owner only)",
    description = "The whole record as the producer now sees it; a running item's update is its \
                   heartbeat. Fields the server keeps (`id`, `ws`, `key`, `owner`, `created_at`) \
                   may be repeated as GET gave them; a changed one is refused by name.",
    params(
        ("ws" = String, Path, description = "The workspace"),
        ("id" = String, Path, description = "The item's id, as registration gave it"),
    ),
    request_body = ItemUpdate,
    responses(
        (status = 200, description = "Updated: the record", body = ItemRecord,
         headers(
            ("ETag" = String, description = "Send it back as If-Match"),
            ("Pickup-Expires-In" = u64, description = "Seconds until PICKUP_TTL deletes this run by its name, as on registration"),
        )),
        (status = 400, description = "`invalid_name` or `invalid_body` (also an unreadable If-Match)", body = ApiError),
        (status = 401, description = "`unauthenticated`", body = ApiError),
        (status = 403, description = "`forbidden`: not a member, a read-only token, or not the owner", body = ApiError),
        (status = 404, description = "`not_found`", body = ApiError),
        (status = 412, description = "`precondition_failed`: If-Match lost the race", body = ApiError),
        (status = 413, description = "`too_large`", body = ApiError),
        (status = 501, description = "`not_supported`: If-Match on a store without conditional writes", body = ApiError),
        (status = 503, description = "`store_unavailable`", body = ApiError),
    ),
)]
pub(super) async fn update(
    State(s): State<AppState>,
    who: Authorized<Write>,
    Names((_, id)): Names<(String, String)>,
    req: Request,
) -> Result<Response, Error> {
    let headers = req.headers().clone();
    let JsonBody(up) = JsonBody::<ItemUpdate>::from_request(req, &()).await?;
    // Present but unreadable is refused, never taken for absent (a plain write).
    let if_match = match headers.get(header::IF_MATCH) {
        None => None,
        Some(v) => Some(
            v.to_str()
                .map_err(|_| crate::index::IndexError::BadValidator)?
                .to_string(),
        ),
    };
    let id = s.pickup.item_id(&id)?;
    let (record, e_tag) = s.pickup.update(&who, id, up, if_match).await?;
    let res = with_etag(Json(&record), StatusCode::OK, e_tag);
    Ok(with_expiry(res, &s, &record))
}

#[utoipa::path(
    get,
    path = route::ITEM,
    tag = "items",
    summary = "Read an item's record",
    params(
        ("ws" = String, Path, description = "The workspace"),
        ("id" = String, Path, description = "The item's id, as registration gave it"),
    ),
    responses(
        (status = 200, description = "The record", body = ItemRecord,
         headers(("ETag" = String, description = "Send it back as If-Match"))),
        (status = 400, description = "`invalid_name`", body = ApiError),
        (status = 401, description = "`unauthenticated`", body = ApiError),
        (status = 403, description = "`forbidden`", body = ApiError),
        (status = 404, description = "`not_found`", body = ApiError),
        (status = 503, description = "`store_unavailable`", body = ApiError),
    ),
)]
pub(super) async fn get_item(
    State(s): State<AppState>,
    who: Authorized<Read>,
    Names((_, id)): Names<(String, String)>,
) -> Result<Response, Error> {
    let id = s.pickup.item_id(&id)?;
    let (record, e_tag) = s.pickup.get(&who, &id).await?;
    Ok(with_etag(Json(record), StatusCode::OK, e_tag))
}

#[utoipa::path(
    delete,
    path = route::ITEM,
    tag = "items",
    summary = "Remove an item (its owner only)",
    params(
        ("ws" = String, Path, description = "The workspace"),
        ("id" = String, Path, description = "The item's id, as registration gave it"),
    ),
    responses(
        (status = 204, description = "Removed"),
        (status = 400, description = "`invalid_name`", body = ApiError),
        (status = 401, description = "`unauthenticated`", body = ApiError),
        (status = 403, description = "`forbidden`: not a member, a read-only token, or not the owner", body = ApiError),
        (status = 404, description = "`not_found`", body = ApiError),
        (status = 503, description = "`store_unavailable`", body = ApiError),
    ),
)]
pub(super) async fn remove(
    State(s): State<AppState>,
    who: Authorized<Write>,
    Names((_, id)): Names<(String, String)>,
) -> Result<StatusCode, Error> {
    let id = s.pickup.item_id(&id)?;
    s.pickup.remove(&who, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    post,
    path = route::DISMISS,
    tag = "items",
    summary = "Hide an item from the caller's own page",
    params(
        ("ws" = String, Path, description = "The workspace"),
        ("id" = String, Path, description = "The item's id, as registration gave it"),
    ),
    responses(
        (status = 204, description = "Dismissed"),
        (status = 400, description = "`invalid_name`", body = ApiError),
        (status = 401, description = "`unauthenticated`", body = ApiError),
        (status = 403, description = "`forbidden`", body = ApiError),
        (status = 404, description = "`not_found`", body = ApiError),
        (status = 503, description = "`store_unavailable`", body = ApiError),
    ),
)]
pub(super) async fn dismiss(
    State(s): State<AppState>,
    who: Authorized<Read>,
    Names((_, id)): Names<(String, String)>,
) -> Result<StatusCode, Error> {
    let id = s.pickup.item_id(&id)?;
    s.pickup.dismiss_item(&who, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The body of `PUT …/looked`: when the viewer looked.
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct LookAt {
    /// An RFC 3339 time, such as the `generated_at` of the page the viewer saw; one later than
    /// the server's now is kept as now.
    at: String,
}

#[utoipa::path(
    get,
    path = route::LOOKED,
    tag = "recent",
    summary = "The caller's own last look at the workspace",
    description = "What \"since you looked\" counts from: the time the caller last marked the \
                   workspace seen, from any device, or `{\"at\": null}` when they never did. \
                   Each viewer has their own; no token reads another's.",
    params(("ws" = String, Path, description = "The workspace")),
    responses(
        (status = 200, description = "The caller's last look", body = LastLook),
        (status = 400, description = "`invalid_name`", body = ApiError),
        (status = 401, description = "`unauthenticated`", body = ApiError),
        (status = 403, description = "`forbidden`", body = ApiError),
        (status = 503, description = "`store_unavailable` (never answered as `{\"at\": null}`)", body = ApiError),
    ),
)]
pub(super) async fn looked(
    State(s): State<AppState>,
    who: Authorized<Read>,
) -> Result<Json<LastLook>, Error> {
    Ok(Json(s.pickup.looked(&who).await?))
}

#[utoipa::path(
    put,
    path = route::LOOKED,
    tag = "recent",
    summary = "Keep the caller's last look at the workspace",
    description = "One write, under the caller's own key (the token's user): a later look \
                   replaces an earlier one; a time later than the server's now is kept as now. \
                   Needs only the read scope.",
    params(("ws" = String, Path, description = "The workspace")),
    request_body = LookAt,
    responses(
        (status = 200, description = "The look kept", body = LastLook),
        (status = 400, description = "`invalid_name` or `invalid_body` (`at` not an RFC 3339 time)", body = ApiError),
        (status = 401, description = "`unauthenticated`", body = ApiError),
        (status = 403, description = "`forbidden`", body = ApiError),
        (status = 413, description = "`too_large`: a body over 64 KiB", body = ApiError),
        (status = 503, description = "`store_unavailable`", body = ApiError),
    ),
)]
pub(super) async fn look(
    State(s): State<AppState>,
    who: Authorized<Read>,
    JsonBody(body): JsonBody<LookAt>,
) -> Result<Json<LastLook>, Error> {
    Ok(Json(s.pickup.look(&who, &body.at).await?))
}

#[utoipa::path(
    get,
    path = route::RECENT,
    tag = "recent",
    summary = "The caller's page of cards, newest first",
    params(("ws" = String, Path, description = "The workspace"), RecentQuery),
    responses(
        (status = 200, description = "The page", body = RecentPage),
        (status = 400, description = "`invalid_name` (also `before`) or `invalid_body` (the query)", body = ApiError),
        (status = 401, description = "`unauthenticated`", body = ApiError),
        (status = 403, description = "`forbidden`", body = ApiError),
        (status = 503, description = "`store_unavailable`", body = ApiError),
    ),
)]
pub(super) async fn recent(
    State(s): State<AppState>,
    who: Authorized<Read>,
    q: RecentQueryResult,
) -> Result<Response, Error> {
    let q = recent_query(q)?;
    if q.views.is_some() {
        return Err(Error::MalformedBody(
            "views is for GET /live; GET /recent gives one page".into(),
        ));
    }
    let before = q
        .before
        .as_deref()
        .map(|id| s.pickup.item_id(id))
        .transpose()?;
    let page = s
        .pickup
        .recent_page(&who, q.filter, q.cap, before.as_ref())
        .await?;
    let mut res = ([(header::CONTENT_TYPE, "application/json")], page.json()).into_response();
    let caller = who.caller();
    if let Ok(viewer) = HeaderValue::from_str(caller.user.as_str()) {
        res.headers_mut().insert(app::contract::VIEWER, viewer);
    }
    res.headers_mut().insert(
        app::contract::TOKEN_EXPIRES,
        HeaderValue::from(caller.expires_at),
    );
    Ok(res)
}

/// The REST API (`/api/v1`), each route registered with its OpenAPI description, so that the
/// router and the document come from this one list.
pub(super) fn rest() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(super::openapi::ApiDoc::openapi())
        .routes(routes!(register))
        .routes(routes!(get_item, update, remove))
        .routes(routes!(dismiss))
        .routes(routes!(looked, look))
        .routes(routes!(super::pins::pins))
        .routes(routes!(super::pins::pin, super::pins::unpin))
        .routes(routes!(recent))
        .routes(routes!(super::drawing::drawing))
        .routes(routes!(super::sse::live))
        .routes(routes!(openapi_json))
}
