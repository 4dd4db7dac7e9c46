//! The widget's door: its server functions (`/api/recent`, `/api/dismiss`, `/api/looked`,
//! `/api/look`), declared in `app` and answered by the same service as the REST routes.

use super::extract::bearer;
use super::state::{AppState, MAX_BODY_BYTES};
use crate::auth::Read;
use crate::error::Error;
use crate::service::Pickup;
use app::contract::{ApiError, Filter, LastLook, RecentPage};
use app::service::Bearer;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// The widget's server functions. The service and the caller's token go in through context;
/// the error's code decides the status (server functions would otherwise answer 500). A body
/// that names a field the function does not take is refused first, as the REST routes refuse
/// one (server_fn's arguments would ignore it).
pub(super) async fn server_fn(State(s): State<AppState>, req: Request<Body>) -> Response {
    let req = match only_known_fields(req).await {
        Ok(req) => req,
        Err(e) => return e.into_response(),
    };
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

/// `req`, whole again, if its JSON body names only the arguments of the function it calls: the
/// function's own arguments, as serde writes them, are what it takes.
async fn only_known_fields(req: Request<Body>) -> Result<Request<Body>, Error> {
    use app::api::{Dismiss, Look, Looked, Pin, Recent};
    use leptos::server_fn::ServerFn;
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| Error::TooLarge(MAX_BODY_BYTES))?;
    let path = parts.uri.path();
    let unknown = match path {
        p if p == Recent::PATH => unknown_fields::<Recent>(&bytes),
        p if p == Dismiss::PATH => unknown_fields::<Dismiss>(&bytes),
        p if p == Pin::PATH => unknown_fields::<Pin>(&bytes),
        p if p == Looked::PATH => unknown_fields::<Looked>(&bytes),
        p if p == Look::PATH => unknown_fields::<Look>(&bytes),
        _ => Vec::new(),
    };
    if !unknown.is_empty() {
        return Err(Error::MalformedBody(format!(
            "the body is not the JSON this call takes: unknown field {}",
            unknown.join(", ")
        )));
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// The keys of a JSON object body that `T` (a function's arguments) does not have; none when
/// the body is not such an object (the function itself says what is wrong with it then).
fn unknown_fields<T: serde::de::DeserializeOwned + serde::Serialize>(body: &[u8]) -> Vec<String> {
    let (Ok(serde_json::Value::Object(given)), Ok(args)) = (
        serde_json::from_slice::<serde_json::Value>(body),
        serde_json::from_slice::<T>(body),
    ) else {
        return Vec::new();
    };
    let Ok(serde_json::Value::Object(known)) = serde_json::to_value(args) else {
        return Vec::new();
    };
    given
        .keys()
        .filter(|k| !known.contains_key(*k))
        .map(|k| format!("`{k}`"))
        .collect()
}

/// The widget's calls (declared in `app` with the raw strings a browser sends), checked here
/// exactly as the REST routes' extractor checks them, then answered by the service.
#[async_trait::async_trait]
impl app::service::Service for Pickup {
    async fn recent(
        &self,
        bearer: Option<&str>,
        ws: &str,
        filter: Filter,
        cap: Option<u32>,
        before: Option<&str>,
    ) -> Result<RecentPage, ApiError> {
        let who = self.auth().authorize::<Read>(bearer, ws).await?;
        let before = before.map(|id| self.item_id(id)).transpose()?;
        Ok(self
            .recent_page(&who, filter, cap, before.as_ref())
            .await?
            .into_page())
    }

    async fn dismiss(&self, bearer: Option<&str>, ws: &str, id: &str) -> Result<(), ApiError> {
        let who = self.auth().authorize::<Read>(bearer, ws).await?;
        let id = self.item_id(id)?;
        Ok(self.dismiss_item(&who, id).await?)
    }

    async fn pin(
        &self,
        bearer: Option<&str>,
        ws: &str,
        id: &str,
        pinned: bool,
    ) -> Result<(), ApiError> {
        let who = self.auth().authorize::<Read>(bearer, ws).await?;
        let id = self.item_id(id)?;
        Ok(self.pin_item(&who, id, pinned).await?)
    }

    async fn looked(&self, bearer: Option<&str>, ws: &str) -> Result<LastLook, ApiError> {
        let who = self.auth().authorize::<Read>(bearer, ws).await?;
        Ok(Pickup::looked(self, &who).await?)
    }

    async fn look(&self, bearer: Option<&str>, ws: &str, at: &str) -> Result<LastLook, ApiError> {
        let who = self.auth().authorize::<Read>(bearer, ws).await?;
        Ok(Pickup::look(self, &who, at).await?)
    }
}
