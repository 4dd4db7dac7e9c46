//! The HTTP surface: the REST routes of the contract, the widget's server functions, health
//! checks and the widget's static files. Errors become `{"error", "message"}` here, with the
//! status their code names.
//!
//! Every answer carries an `X-Request-Id` (the caller's, or a new UUID) and
//! `X-Content-Type-Options: nosniff`; API answers (`/api/…`, `/healthz`, `/readyz`) carry
//! `Cache-Control: no-store`, pages and files of the site a Content-Security-Policy
//! ([`content_security_policy`]) and the caching and encoding of [`crate::site`]. Other answers
//! are gzipped on the fly when the client accepts it; a precompressed file is sent as it is. A request that takes longer than its timeout gets 408.

use crate::auth::Access;
use crate::error::Error;
use crate::record::{ItemRecord, ItemUpdate, NewItem};
use crate::service::Pickup;
use app::error::ApiError;
use app::model::{Filter, RecentPage};
use app::service::{Bearer, ServiceHandle};
use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceBuilder;
use tower_http::compression::CompressionLayer;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Larger bodies get 413 before they are read: a record is a few hundred bytes.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        // The conversion logs a 5xx's detail and gives the client a generic message.
        api_error_response(ApiError::from(self))
    }
}

fn api_error_response(e: ApiError) -> Response {
    let status =
        StatusCode::from_u16(e.error.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(e)).into_response()
}

/// A JSON body: malformed or wrong-typed JSON is a 400 `invalid_body`, an oversized one 413.
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        // Refuse an announced oversized body before reading a byte of it.
        let announced = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
        if announced.is_some_and(|n| n > MAX_BODY_BYTES) {
            return Err(Error::TooLarge(MAX_BODY_BYTES));
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|r| {
            if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
                Error::TooLarge(MAX_BODY_BYTES)
            } else {
                Error::MalformedBody(r.body_text())
            }
        })?;
        serde_json::from_slice(&bytes).map(JsonBody).map_err(|e| {
            Error::MalformedBody(format!("the body is not the JSON this route takes: {e}"))
        })
    }
}

/// Path segments, decoded by axum; a bad one is a 400 before anything else happens.
pub struct Names<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> axum::extract::FromRequestParts<S> for Names<T> {
    type Rejection = Error;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(t)| Names(t))
            .map_err(|e| Error::MalformedPath(e.body_text()))
    }
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().to_string())
}

#[derive(Clone)]
pub struct AppState {
    pub pickup: Pickup,
    /// The same service, as the server functions take it from context (made once, not per call).
    pub handle: ServiceHandle,
}

pub struct HttpConfig {
    pub site: std::path::PathBuf,
    /// Origins whose pages may call this server, checked by [`allowed_origins`].
    pub allowed_origins: Vec<HeaderValue>,
    /// Who may frame the site's pages (CSP `frame-ancestors`), checked by [`frame_ancestors`].
    pub frame_ancestors: String,
    /// A request still unanswered after this gets 408.
    pub request_timeout: Duration,
}

/// The REST API (`/api/v1`), each route registered with its OpenAPI description, so that the
/// router and the document come from this one list.
pub fn rest() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(crate::openapi::ApiDoc::openapi())
        .routes(routes!(register))
        .routes(routes!(get_item, update, remove))
        .routes(routes!(dismiss))
        .routes(routes!(recent))
        .routes(routes!(live))
        .routes(routes!(openapi_json))
}

pub fn router(pickup: Pickup, config: &HttpConfig) -> Router {
    let handle = ServiceHandle(Arc::new(pickup.clone()));
    let state = AppState { pickup, handle };
    let (rest, doc) = rest().split_for_parts();
    let doc = OpenApiJson(Bytes::from(
        doc.to_json().expect("the OpenAPI document serialises"),
    ));
    let api = rest
        .layer(axum::Extension(doc))
        .route("/api/recent", post(server_fn))
        .route("/api/dismiss", post(server_fn))
        // Anything else under /api is a name that did not fit a route (`a/b`, an empty segment).
        .route("/api/{*rest}", axum::routing::any(no_such_route))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(SetResponseHeaderLayer::overriding(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-store"),
        ));
    // The home page's inline script (public/home.js), allowed by its hash.
    let home_scripts = Arc::new(crate::site::InlineScripts::new(
        config.site.join("index.html"),
    ));
    let frame_ancestors = config.frame_ancestors.clone();
    let site = ServiceBuilder::new()
        .layer(middleware::from_fn(crate::site::headers))
        .layer(SetResponseHeaderLayer::overriding(
            header::CONTENT_SECURITY_POLICY,
            move |res: &axum::http::Response<_>| {
                Some(content_security_policy(
                    &frame_ancestors,
                    false,
                    &home_scripts.for_answer(res),
                ))
            },
        ))
        .service(crate::site::dir(&config.site));
    // The example host page may call a Pickup server its URL names (see public/embed.js).
    let embed_page = ServiceBuilder::new()
        .layer(middleware::from_fn(crate::site::headers))
        .layer(SetResponseHeaderLayer::overriding(
            header::CONTENT_SECURITY_POLICY,
            content_security_policy(&config.frame_ancestors, true, &[]),
        ))
        .service(crate::site::file(&config.site.join("embed.html")));
    let cors = CorsLayer::new()
        .allow_origin(AllowOrigin::list(config.allowed_origins.clone()))
        .allow_methods([Method::GET, Method::POST, Method::PUT, Method::DELETE])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::IF_MATCH,
            header::ACCEPT,
        ])
        .expose_headers([header::ETAG, X_REQUEST_ID]);
    Router::new()
        .merge(api)
        .route_service("/embed.html", embed_page)
        .fallback_service(site)
        .with_state(state)
        .layer(
            // Top to bottom: the order a request passes the layers.
            ServiceBuilder::new()
                // First, so that every answer is counted, a timeout's 408 too.
                .layer(middleware::from_fn(crate::metrics::count_request))
                .layer(SetRequestIdLayer::new(X_REQUEST_ID, MakeRequestUuid))
                .layer(TraceLayer::new_for_http().make_span_with(request_span))
                .layer(PropagateRequestIdLayer::new(X_REQUEST_ID))
                .layer(middleware::from_fn(request_id_scope))
                .layer(cors)
                .layer(SetResponseHeaderLayer::overriding(
                    header::X_CONTENT_TYPE_OPTIONS,
                    HeaderValue::from_static("nosniff"),
                ))
                .layer(CompressionLayer::new())
                .layer(TimeoutLayer::with_status_code(
                    StatusCode::REQUEST_TIMEOUT,
                    config.request_timeout,
                )),
        )
}

const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

fn request_id_of<B>(req: &Request<B>) -> &str {
    req.headers()
        .get(X_REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-")
}

fn request_span<B>(req: &Request<B>) -> tracing::Span {
    tracing::info_span!(
        "request",
        method = %req.method(),
        uri = %req.uri(),
        request_id = %request_id_of(req),
    )
}

/// Lets the error conversion (for both doors) name the request it answers.
async fn request_id_scope(req: Request, next: Next) -> Response {
    let id = request_id_of(&req).to_string();
    crate::error::with_request_id(id, next.run(req)).await
}

/// The site's policy: scripts from this origin only (and the widget's WebAssembly, and the
/// `inline_scripts` sources: the home page's own script, by its hash), no plugins,
/// no `<base>`, framed only by `frame_ancestors`. The example embed page may also call another
/// Pickup server (`connect-src`), since its URL may name one.
pub fn content_security_policy(
    frame_ancestors: &str,
    embed_page: bool,
    inline_scripts: &[String],
) -> HeaderValue {
    let scripts: String = inline_scripts.iter().map(|s| format!(" {s}")).collect();
    let connect = if embed_page {
        "connect-src 'self' http: https:; "
    } else {
        ""
    };
    HeaderValue::from_str(&format!(
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'{scripts}; {connect}object-src 'none'; \
         base-uri 'none'; form-action 'self'; frame-ancestors {frame_ancestors}"
    ))
    .expect("frame_ancestors was checked by http::frame_ancestors")
}

/// `PICKUP_FRAME_ANCESTORS`: CSP sources separated by spaces (`'self'`, `'none'`,
/// `https://app.example.com`, …). Refused if it could end the directive or break the header.
pub fn frame_ancestors(raw: &str) -> anyhow::Result<String> {
    let value = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    if value.is_empty()
        || value
            .chars()
            .any(|c| !(c.is_ascii_graphic() || c == ' ') || c == ';' || c == ',')
    {
        anyhow::bail!(
            "PICKUP_FRAME_ANCESTORS {raw:?} is not a list of CSP sources: write e.g. \"'self'\", \"'none'\" or \"'self' https://app.example.com\", separated by spaces"
        );
    }
    Ok(value)
}

/// `PICKUP_ALLOWED_ORIGINS`: comma-separated origins, each trimmed; empty entries are ignored.
/// `*` and anything that is not exactly `scheme://host[:port]` are refused with an error that
/// names the entry.
pub fn allowed_origins(raw: &str) -> anyhow::Result<Vec<HeaderValue>> {
    let mut out = Vec::new();
    for entry in raw.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        if entry == "*" {
            anyhow::bail!(
                "PICKUP_ALLOWED_ORIGINS may not be \"*\": tokens travel in the Authorization header, so list each origin whose pages may call this server, e.g. https://app.example.com"
            );
        }
        let origin = url::Url::parse(entry)
            .ok()
            .map(|u| u.origin())
            .filter(|o| o.is_tuple())
            .map(|o| o.ascii_serialization());
        match origin {
            Some(o) if o.eq_ignore_ascii_case(entry) => {
                out.push(HeaderValue::from_str(&o).expect("an origin is a valid header value"))
            }
            Some(o) => anyhow::bail!(
                "PICKUP_ALLOWED_ORIGINS entry {entry:?} is not an origin: write scheme://host[:port] with no path (did you mean {o}?)"
            ),
            None => anyhow::bail!(
                "PICKUP_ALLOWED_ORIGINS entry {entry:?} is not an origin: write scheme://host[:port], e.g. https://app.example.com"
            ),
        }
    }
    Ok(out)
}

/// The document, serialised once when the router is built (a clone shares the bytes).
#[derive(Clone)]
struct OpenApiJson(Bytes);

#[utoipa::path(
    get,
    path = "/api/v1/openapi.json",
    tag = "meta",
    summary = "This document (no token needed)",
    security(()),
    responses((status = 200, description = "The OpenAPI 3.1 document of this API", content_type = "application/json", body = Object)),
)]
async fn openapi_json(axum::Extension(doc): axum::Extension<OpenApiJson>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], doc.0).into_response()
}

async fn no_such_route() -> Error {
    Error::MalformedPath(
        "no such route: names cannot contain '/' or be empty; see the API in the README".into(),
    )
}

async fn readyz(State(s): State<AppState>) -> Response {
    match s.pickup.index.store().ready().await {
        Ok(()) => (StatusCode::OK, "ready").into_response(),
        Err(e) => {
            // The detail (paths, endpoints) goes to the log only.
            let id = crate::error::request_id();
            tracing::error!(request_id = %id, error = %e, "readyz: the store did not answer");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("store not answering (request id {id})"),
            )
                .into_response()
        }
    }
}

fn with_etag(body: impl IntoResponse, status: StatusCode, e_tag: Option<String>) -> Response {
    let mut res = (status, body).into_response();
    if let Some(v) = e_tag.and_then(|t| HeaderValue::from_str(&t).ok()) {
        res.headers_mut().insert(header::ETAG, v);
    }
    res
}

/// The JSON body of a write, read only once the caller may make it (401/403 before 400).
async fn body_of<T: DeserializeOwned>(
    s: &AppState,
    headers: &HeaderMap,
    ws: &str,
    req: Request,
) -> Result<T, Error> {
    s.pickup
        .authorize(bearer(headers).as_deref(), ws, Access::Write)
        .await?;
    let JsonBody(body) = JsonBody::<T>::from_request(req, &()).await?;
    Ok(body)
}

#[utoipa::path(
    post,
    path = "/api/v1/workspaces/{ws}/items",
    tag = "items",
    summary = "Register an item",
    description = "A new run of `key`: its id is chosen by the server. Needs the write scope; \
                   the caller becomes the item's owner.",
    params(("ws" = String, Path, description = "The workspace: 1 to 63 of a-z, 0-9 and '-', starting with a letter or digit")),
    request_body = NewItem,
    responses(
        (status = 201, description = "Registered: the record", body = ItemRecord),
        (status = 400, description = "`invalid_name` or `invalid_body`", body = ApiError),
        (status = 401, description = "`unauthenticated`", body = ApiError),
        (status = 403, description = "`forbidden`: not a member, or a read-only token", body = ApiError),
        (status = 409, description = "`conflict`: every id tried for the key was taken; send it again", body = ApiError),
        (status = 413, description = "`too_large`: a body over 64 KiB", body = ApiError),
        (status = 503, description = "`store_unavailable`", body = ApiError),
    ),
)]
async fn register(
    State(s): State<AppState>,
    headers: HeaderMap,
    Names(ws): Names<String>,
    req: Request,
) -> Result<Response, Error> {
    let item: NewItem = match body_of(&s, &headers, &ws, req).await {
        Ok(item) => item,
        Err(e) => {
            // A refused body counts here, where it is read; the service counts the rest.
            crate::metrics::registration(Err(&e));
            return Err(e);
        }
    };
    let registered = s
        .pickup
        .register(bearer(&headers).as_deref(), &ws, item)
        .await?;
    Ok((StatusCode::CREATED, Json(registered)).into_response())
}

#[utoipa::path(
    put,
    path = "/api/v1/workspaces/{ws}/items/{id}",
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
         headers(("ETag" = String, description = "Send it back as If-Match"))),
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
async fn update(
    State(s): State<AppState>,
    headers: HeaderMap,
    Names((ws, id)): Names<(String, String)>,
    req: Request,
) -> Result<Response, Error> {
    let up: ItemUpdate = body_of(&s, &headers, &ws, req).await?;
    // Present but unreadable is refused, never taken for absent (a plain write).
    let if_match = match headers.get(header::IF_MATCH) {
        None => None,
        Some(v) => Some(
            v.to_str()
                .map_err(|_| crate::store::BadValidator)?
                .to_string(),
        ),
    };
    let (record, e_tag) = s
        .pickup
        .update(bearer(&headers).as_deref(), &ws, &id, up, if_match)
        .await?;
    Ok(with_etag(Json(record), StatusCode::OK, e_tag))
}

#[utoipa::path(
    get,
    path = "/api/v1/workspaces/{ws}/items/{id}",
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
async fn get_item(
    State(s): State<AppState>,
    headers: HeaderMap,
    Names((ws, id)): Names<(String, String)>,
) -> Result<Response, Error> {
    let (record, e_tag) = s.pickup.get(bearer(&headers).as_deref(), &ws, &id).await?;
    Ok(with_etag(Json(record), StatusCode::OK, e_tag))
}

#[utoipa::path(
    delete,
    path = "/api/v1/workspaces/{ws}/items/{id}",
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
async fn remove(
    State(s): State<AppState>,
    headers: HeaderMap,
    Names((ws, id)): Names<(String, String)>,
) -> Result<StatusCode, Error> {
    s.pickup
        .remove(bearer(&headers).as_deref(), &ws, &id)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    post,
    path = "/api/v1/workspaces/{ws}/items/{id}/dismiss",
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
async fn dismiss(
    State(s): State<AppState>,
    headers: HeaderMap,
    Names((ws, id)): Names<(String, String)>,
) -> Result<StatusCode, Error> {
    s.pickup
        .dismiss_item(bearer(&headers).as_deref(), &ws, &id)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct RecentQuery {
    /// Whose items: everyone's (`all`, the default) or the caller's own (`mine`).
    #[serde(default)]
    #[param(inline)]
    filter: Filter,
    /// Cards per page, 1 to 50 (default: the server's `PICKUP_CAP`).
    cap: Option<u32>,
    /// The last id of the page the caller has: answer the next page (not on `/live`).
    before: Option<String>,
}

type RecentQueryResult = Result<Query<RecentQuery>, axum::extract::rejection::QueryRejection>;

/// `?filter=…&cap=…&before=…`, or a 400 that says what each must be.
fn recent_query(q: RecentQueryResult) -> Result<RecentQuery, Error> {
    let Query(q) = q.map_err(|e| {
        Error::MalformedBody(format!(
            "filter must be all or mine, cap a number, before an id: {}",
            e.body_text()
        ))
    })?;
    Ok(q)
}

#[utoipa::path(
    get,
    path = "/api/v1/workspaces/{ws}/recent",
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
async fn recent(
    State(s): State<AppState>,
    headers: HeaderMap,
    Names(ws): Names<String>,
    q: RecentQueryResult,
) -> Result<Response, Error> {
    let q = recent_query(q)?;
    let page = s
        .pickup
        .recent_page(
            bearer(&headers).as_deref(),
            &ws,
            q.filter,
            q.cap,
            q.before.as_deref(),
        )
        .await?;
    Ok(Json(page).into_response())
}

/// How often a stream sends a comment when it has nothing to say, so that proxies between the
/// server and the browser do not close it as idle.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// `GET /api/v1/workspaces/{ws}/live`: the viewer's page as server-sent events, read with
/// `fetch` (the token travels in `Authorization`, never in the URL). Refusals (401, 403, 400)
/// come before the stream, as JSON errors like every route's.
#[utoipa::path(
    get,
    path = "/api/v1/workspaces/{ws}/live",
    tag = "recent",
    summary = "The caller's page as server-sent events",
    description = "`event: page` (data: a RecentPage) at once and whenever it changes; \
                   `event: unavailable` (data: an ApiError) while the store does not answer; \
                   then one closing event, `unauthenticated` or `reconnect`. Refusals come \
                   before the stream, as JSON.",
    params(("ws" = String, Path, description = "The workspace"), RecentQuery),
    responses(
        (status = 200, description = "The stream", content_type = "text/event-stream", body = String),
        (status = 400, description = "`invalid_name` or `invalid_body` (the query; `before` is refused)", body = ApiError),
        (status = 401, description = "`unauthenticated`", body = ApiError),
        (status = 403, description = "`forbidden`", body = ApiError),
        (status = 501, description = "`not_supported`: this server serves no live streams (`PICKUP_LIVE_EVERY=0s`)", body = ApiError),
        (status = 503, description = "`busy` (poll instead) or `store_unavailable`", body = ApiError),
    ),
)]
async fn live(
    State(s): State<AppState>,
    headers: HeaderMap,
    Names(ws): Names<String>,
    q: RecentQueryResult,
) -> Result<Response, Error> {
    use crate::live::{Event, Frame};
    use axum::response::sse::{self, KeepAlive, Sse};
    use futures::StreamExt;
    let q = recent_query(q)?;
    if q.before.is_some() {
        return Err(Error::MalformedBody(
            "a live stream sends the first page: drop before (GET /recent pages with it)".into(),
        ));
    }
    let (sub, expires_at) = s
        .pickup
        .subscribe(bearer(&headers).as_deref(), &ws, q.filter, q.cap)
        .await?;
    let events = sub.frames(expires_at).map(|frame| {
        let event = match frame {
            Frame::Event(Event::Page(page)) => sse::Event::default().event("page").json_data(page),
            Frame::Event(Event::Unavailable) => {
                let e = ApiError::new(
                    app::error::ErrorCode::StoreUnavailable,
                    "the object store did not answer; the last page stands, and this stream retries",
                );
                sse::Event::default().event("unavailable").json_data(e)
            }
            Frame::Unauthenticated => {
                let e = ApiError::from(Error::Unauthenticated(
                    "the token expired; get a new one".into(),
                ));
                sse::Event::default().event("unauthenticated").json_data(e)
            }
            Frame::Reconnect => Ok(sse::Event::default().event("reconnect").data("{}")),
        };
        Ok::<_, std::convert::Infallible>(event.expect("a page serialises"))
    });
    let mut res = Sse::new(events)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response();
    // Proxies that buffer responses (nginx) pass this one through as it comes.
    res.headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(res)
}

/// The widget's server functions. The service and the caller's token go in through context;
/// the error's code decides the status (server functions would otherwise answer 500).
async fn server_fn(State(s): State<AppState>, req: Request<Body>) -> Response {
    let handle = s.handle.clone();
    let token = Bearer(bearer(req.headers()));
    let res = leptos_axum::handle_server_fns_with_context(
        move || {
            leptos::prelude::provide_context(handle.clone());
            leptos::prelude::provide_context(token.clone());
        },
        req,
    )
    .await
    .into_response();
    if res.status() != StatusCode::INTERNAL_SERVER_ERROR {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .unwrap_or_default();
    if let Ok(e) = serde_json::from_slice::<ApiError>(&bytes) {
        parts.status = StatusCode::from_u16(e.error.http_status()).unwrap_or(parts.status);
    }
    Response::from_parts(parts, Body::from(bytes))
}
