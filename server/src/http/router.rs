//! The whole HTTP surface as one axum `Router`: the REST routes, the widget's server
//! functions, health checks and the widget's static files, and the layers every answer passes.
//!
//! Every answer carries an `X-Request-Id` (the caller's when it is [`usable_request_id`],
//! else a new UUID) and
//! `X-Content-Type-Options: nosniff`; API answers (`/api/…`, `/healthz`, `/readyz`) carry
//! `Cache-Control: no-store`, pages and files of the site a Content-Security-Policy
//! ([`content_security_policy`]) and the caching and encoding of `site`. Other answers
//! are gzipped on the fly when the client accepts it; a precompressed file is sent as it is. A
//! request that takes longer than its timeout gets 408.

use super::policy::content_security_policy;
use super::routes::{self, OpenApiJson};
use super::server_fns::server_fn;
use super::state::{AppState, MAX_BODY_BYTES};
use crate::service::Pickup;
use app::contract::names::route;
use app::service::ServiceHandle;
use axum::body::Bytes;
use axum::extract::Request;
use axum::http::{header, HeaderName, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceBuilder;
use tower_http::compression::CompressionLayer;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

pub struct HttpConfig {
    pub site: std::path::PathBuf,
    /// Origins whose pages may call this server, checked by [`allowed_origins`].
    pub allowed_origins: Vec<HeaderValue>,
    /// Who may frame the site's pages (CSP `frame-ancestors`), checked by [`frame_ancestors`].
    pub frame_ancestors: String,
    /// A request still unanswered after this gets 408.
    pub request_timeout: Duration,
}

pub(crate) fn router(pickup: Pickup, config: &HttpConfig) -> Router {
    let handle = ServiceHandle(Arc::new(pickup.clone()));
    let state = AppState { pickup, handle };
    let doors = with_site(Router::new().merge(api()), config).with_state(state);
    with_layers(doors, config)
}

/// The API: the REST routes (with their OpenAPI document), the widget's server functions and
/// the health checks, none of them cached.
fn api() -> Router<AppState> {
    let (rest, doc) = routes::rest().split_for_parts();
    let doc = OpenApiJson(Bytes::from(
        doc.to_json().expect("the OpenAPI document serialises"),
    ));
    rest.layer(axum::Extension(doc))
        .route("/api/recent", post(server_fn))
        .route("/api/dismiss", post(server_fn))
        .route("/api/pin", post(server_fn))
        .route("/api/looked", post(server_fn))
        .route("/api/look", post(server_fn))
        // Anything else under /api is a name that did not fit a route (`a/b`, an empty segment).
        .route("/api/{*rest}", axum::routing::any(routes::no_such_route))
        .route(route::HEALTHZ, get(|| async { "ok" }))
        .route(route::READYZ, get(routes::readyz))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn(said_too_large))
        .layer(SetResponseHeaderLayer::overriding(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-store"),
        ))
}

/// A body said to be over the limit is refused before any route, so that a route that reads
/// no body (a pin, a dismissal) refuses it as the routes that read one do.
async fn said_too_large(
    req: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let said = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    match said {
        Some(n) if n > MAX_BODY_BYTES => {
            crate::error::Error::TooLarge(MAX_BODY_BYTES).into_response()
        }
        _ => next.run(req).await,
    }
}

/// The site's pages and files, on every path the API does not take, each with its
/// Content-Security-Policy.
fn with_site(router: Router<AppState>, config: &HttpConfig) -> Router<AppState> {
    // The home page's inline script (public/home.js), allowed by its hash.
    let home_scripts = Arc::new(super::site::InlineScripts::new(
        config.site.join("index.html"),
    ));
    let frame_ancestors = config.frame_ancestors.clone();
    let site = ServiceBuilder::new()
        .layer(middleware::from_fn(super::site::headers))
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
        .service(super::site::dir(&config.site));
    // The example host page may call a Pickup server its URL names (see public/embed.js).
    let embed_page = ServiceBuilder::new()
        .layer(middleware::from_fn(super::site::headers))
        .layer(SetResponseHeaderLayer::overriding(
            header::CONTENT_SECURITY_POLICY,
            content_security_policy(&config.frame_ancestors, true, &[]),
        ))
        .service(super::site::file(&config.site.join("embed.html")));
    router
        .route_service("/embed.html", embed_page)
        .fallback_service(site)
}

/// Which pages of other origins may call this server, and what they may send and read.
fn cors(config: &HttpConfig) -> CorsLayer {
    CorsLayer::new()
        .allow_origin(AllowOrigin::list(config.allowed_origins.clone()))
        .allow_methods([Method::GET, Method::POST, Method::PUT, Method::DELETE])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::IF_MATCH,
            header::ACCEPT,
        ])
        // A page that registers or updates items reads the same answers `pickup run` does.
        .expose_headers([
            header::ETAG,
            X_REQUEST_ID,
            HeaderName::from_static(app::contract::EXPIRES_IN),
            // share.js groups a browser's tabs by the viewer the server took each token for.
            HeaderName::from_static(app::contract::VIEWER),
            HeaderName::from_static(app::contract::TOKEN_EXPIRES),
        ])
}

/// The layers every answer passes: counted, named by a request id, traced, CORS, `nosniff`,
/// compressed, and 408 past the request timeout.
fn with_layers(router: Router, config: &HttpConfig) -> Router {
    router.layer(
        // Top to bottom: the order a request passes the layers.
        ServiceBuilder::new()
            // First, so that every answer is counted, a timeout's 408 too.
            .layer(middleware::from_fn(crate::metrics::count_request))
            .layer(middleware::map_request(drop_unusable_request_id))
            .layer(SetRequestIdLayer::new(X_REQUEST_ID, MakeRequestUuid))
            .layer(TraceLayer::new_for_http().make_span_with(request_span))
            .layer(PropagateRequestIdLayer::new(X_REQUEST_ID))
            .layer(middleware::from_fn(request_id_scope))
            .layer(cors(config))
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

/// The longest caller's request id kept; a UUID is 36.
const MAX_REQUEST_ID_BYTES: usize = 128;

/// Whether the caller's request id may name the request in logs and answers: 1 to
/// [`MAX_REQUEST_ID_BYTES`] bytes of visible ASCII (no space, no control, no quote to break
/// out of a quoted log field).
fn usable_request_id(id: &[u8]) -> bool {
    (1..=MAX_REQUEST_ID_BYTES).contains(&id.len())
        && id.iter().all(|b| b.is_ascii_graphic() && *b != b'"')
}

/// Removes a request id that is not [`usable_request_id`] (or that is sent twice), so
/// `SetRequestIdLayer` gives the request a new one: what the caller sent is never echoed.
async fn drop_unusable_request_id(mut req: Request) -> Request {
    let ids = req.headers().get_all(X_REQUEST_ID);
    let mut ids = ids.iter();
    let keep = match (ids.next(), ids.next()) {
        (Some(id), None) => usable_request_id(id.as_bytes()),
        (None, _) => true,
        (Some(_), Some(_)) => false,
    };
    if !keep {
        req.headers_mut().remove(X_REQUEST_ID);
    }
    req
}

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
        request_id = request_id_of(req),
    )
}

/// Lets the error conversion (for both doors) name the request it answers.
async fn request_id_scope(req: Request, next: Next) -> Response {
    let id = request_id_of(&req).to_string();
    crate::error::with_request_id(id, next.run(req)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_id_is_short_visible_ascii() {
        assert!(usable_request_id(b"0b6c2c1e-1f3a-4e5b-9d2a-7b1f3c9e8a10"));
        assert!(usable_request_id(&[b'a'; MAX_REQUEST_ID_BYTES]));
        for bad in [
            &b""[..],
            b"1234 request_id=forged",
            b"a\tb",
            b"a\"b",
            "caf\u{e9}".as_bytes(),
            &[b'a'; MAX_REQUEST_ID_BYTES + 1],
        ] {
            assert!(
                !usable_request_id(bad),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
