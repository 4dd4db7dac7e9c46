//! What a handler takes from a request: the caller (verified once, [`Authorized`]), the path's
//! names, and a bounded JSON body. Each refusal is an [`Error`], answered as the contract's
//! `{"error", "message"}` with the status its code names.

use super::state::{AppState, MAX_BODY_BYTES};
use crate::auth::{Authorized, Grant};
use crate::error::Error;
use app::contract::{ApiError, Filter};
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::collections::HashMap;

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        // The conversion logs a 5xx's detail and gives the client a generic message.
        api_error_response(ApiError::from(self))
    }
}

fn api_error_response(e: ApiError) -> Response {
    let status =
        StatusCode::from_u16(e.error.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, Json(e)).into_response();
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        // The body is left unread, so hyper closes the connection after this answer; saying
        // so keeps the client from sending its next request down a connection being closed.
        response.headers_mut().insert(
            header::CONNECTION,
            header::HeaderValue::from_static("close"),
        );
    }
    response
}

/// A JSON body: malformed or wrong-typed JSON is a 400 `invalid_body`, an oversized one 413.
pub(super) struct JsonBody<T>(pub T);

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
pub(super) struct Names<T>(pub T);

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

pub(super) fn bearer(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().to_string())
}

/// The token, verified once, and the workspace of the path (`{ws}`), checked for the access
/// the handler asks for: 401 (token) before 400 (name) before 403 (membership), and all of
/// them before a body is read, so a stranger learns nothing from body errors.
impl<A: Grant> FromRequestParts<AppState> for Authorized<A> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let Names(names) =
            Names::<HashMap<String, String>>::from_request_parts(parts, state).await?;
        let ws = names.get("ws").map(String::as_str).unwrap_or_default();
        state
            .pickup
            .auth()
            .authorize::<A>(bearer(&parts.headers).as_deref(), ws)
            .await
    }
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct RecentQuery {
    /// Whose items: everyone's (`all`, the default) or the caller's own (`mine`).
    #[serde(default)]
    #[param(inline)]
    pub(super) filter: Filter,
    /// Cards per page, 1 to 50 (default: the server's `PICKUP_CAP`).
    pub(super) cap: Option<u32>,
    /// The last id of the page the caller has: answer the next page (not on `/live`).
    pub(super) before: Option<String>,
    /// `/live` only: several pages in one stream, as `filter:cap` pairs (`all:8,mine:20`), in
    /// place of `filter` and `cap`. Each page event then names its `filter` and `cap`. A
    /// browser's widgets share one stream this way (public/share.js).
    pub(super) views: Option<String>,
}

/// One page of a stream: whose items, how many cards.
pub(super) type View = (Filter, u32);

/// `all:8,mine:20`: one page per filter, by the contract's rule ([`app::contract::page::views`]).
pub(super) fn views(list: &str) -> Result<Vec<View>, Error> {
    app::contract::page::views(list).map_err(|why| {
        Error::MalformedBody(format!(
            "views must be filter:cap pairs, comma-separated (all:8,mine:20): {why}"
        ))
    })
}

pub(super) type RecentQueryResult =
    Result<Query<RecentQuery>, axum::extract::rejection::QueryRejection>;

/// `?filter=…&cap=…&before=…`, or a 400 that says what each must be.
pub(super) fn recent_query(q: RecentQueryResult) -> Result<RecentQuery, Error> {
    let Query(q) = q.map_err(|e| {
        Error::MalformedBody(format!(
            "filter must be all or mine, cap a number, before an id: {}",
            e.body_text()
        ))
    })?;
    Ok(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_are_filter_cap_pairs_each_filter_once() {
        assert_eq!(views("all:8").unwrap(), vec![(Filter::All, 8)]);
        assert_eq!(
            views("mine:20,all:1").unwrap(),
            vec![(Filter::Mine, 20), (Filter::All, 1)]
        );
        // Out of range is brought into range, as `?cap=` is on every door.
        assert_eq!(
            views("all:0,mine:51").unwrap(),
            vec![(Filter::All, 1), (Filter::Mine, 50)]
        );
        for bad in [
            "",
            "all",
            "all:-1",
            "all:x",
            "some:3",
            "all:3,all:4",
            "all:3,",
        ] {
            assert!(views(bad).is_err(), "{bad:?} was taken");
        }
    }
}
