//! The REST API's OpenAPI 3.1 document, served at `GET /api/v1/openapi.json`. The paths come
//! from the handlers themselves (`#[utoipa::path]` in [`crate::http`]), registered with
//! utoipa-axum's router, so a route cannot exist without being documented, nor the other way
//! round. What is common to every path lives here: the title, the bearer scheme, the errors.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

/// The name the `security` requirements refer to (the derive below needs it as a literal).
pub(super) const BEARER: &str = "bearer";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Pickup",
        description = "The newest in-flight and recently finished items of a workspace. Every \
                       route but this document takes `Authorization: Bearer <JWT>`; writes need \
                       the `write` scope. Errors are `{\"error\": code, \"message\": text}` \
                       (ApiError); every answer carries `X-Request-Id`, and a 5xx's message \
                       ends with it."
    ),
    modifiers(&BearerJwt),
    security(("bearer" = [])),
    components(schemas(app::contract::ApiError, app::contract::ErrorCode)),
    tags(
        (name = "items", description = "Register, read, update, remove and dismiss items"),
        (name = "recent", description = "The viewer's page of cards, once or as a live stream"),
        (name = "meta", description = "This document")
    )
)]
pub(super) struct ApiDoc;

/// `Authorization: Bearer <JWT>`: Pickup's own HS256 tokens, or the identity provider's.
struct BearerJwt;

impl Modify for BearerJwt {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            BEARER,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .build(),
            ),
        );
    }
}
