//! The widget's door: its server functions (`/api/recent`, `/api/dismiss`, `/api/looked`,
//! `/api/look`), declared in `app` and answered by the same service as the REST routes.

use super::extract::bearer;
use super::state::{AppState, MAX_BODY_BYTES};
use crate::auth::Read;
use crate::service::Pickup;
use app::contract::{ApiError, Filter, LastLook, RecentPage};
use app::service::Bearer;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// The widget's server functions. The service and the caller's token go in through context;
/// the error's code decides the status (server functions would otherwise answer 500).
pub(super) async fn server_fn(State(s): State<AppState>, req: Request<Body>) -> Response {
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

    async fn looked(&self, bearer: Option<&str>, ws: &str) -> Result<LastLook, ApiError> {
        let who = self.auth().authorize::<Read>(bearer, ws).await?;
        Ok(Pickup::looked(self, &who).await?)
    }

    async fn look(&self, bearer: Option<&str>, ws: &str, at: &str) -> Result<LastLook, ApiError> {
        let who = self.auth().authorize::<Read>(bearer, ws).await?;
        Ok(Pickup::look(self, &who, at).await?)
    }
}
