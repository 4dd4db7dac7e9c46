//! The server's one error enum. It becomes the contract's [`ApiError`] (code and message) here,
//! for both doors (REST routes and server functions); the HTTP status comes from the code
//! ([`app::error::ErrorCode::http_status`]).
//!
//! A 5xx never shows the client what went wrong inside (a store's error names paths, buckets
//! and endpoints): the client gets a generic message with the request's id, and the log gets
//! the detail with the same id.

use crate::id::IdError;
use crate::names::NameError;
use crate::record::BodyError;
use crate::store::StoreError;
use app::error::{ApiError, ErrorCode};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    #[error(transparent)]
    InvalidName(#[from] NameError),
    #[error("invalid item id: {0}")]
    InvalidId(#[from] IdError),
    #[error("invalid path: {0}")]
    MalformedPath(String),
    #[error(transparent)]
    InvalidBody(#[from] BodyError),
    #[error("{0}")]
    MalformedBody(String),
    #[error(transparent)]
    BadValidator(#[from] crate::store::BadValidator),
    #[error("{0}")]
    Unauthenticated(String),
    /// The same answer whether or not the workspace or item exists.
    #[error("this token does not grant {0} on that workspace")]
    Forbidden(&'static str),
    /// Only the token that registered an item may change or remove it.
    #[error("only the item's owner (the token that registered it) may change or remove it")]
    NotOwner,
    /// An id dated later than now plus the clock skew servers may have: no server made it.
    #[error("the item id is dated {ahead_ms} ms in the future, more than the allowed clock skew of {max_skew_ms} ms: ids come from registration, never from the caller's clock")]
    FutureId { ahead_ms: u64, max_skew_ms: u64 },
    #[error("no such item")]
    NotFound,
    #[error("the item changed since the ETag given in If-Match: read it again and retry")]
    PreconditionFailed,
    /// Every id register tried for this key was taken: many registrations of one key at once.
    #[error("{attempts} ids for key {key} in a row were taken by other registrations of it: send the registration again")]
    IdsTaken { key: String, attempts: u64 },
    #[error("the request body is larger than {0} bytes")]
    TooLarge(usize),
    #[error("{0}")]
    NotSupported(String),
    /// As many live streams as this server allows are open.
    #[error("this server has {0} live streams open, as many as it allows: poll instead, and try the stream again later")]
    TooManyStreams(usize),
    #[error(transparent)]
    Store(StoreError),
    /// A record that exists but cannot be read as one (written by a newer version, damaged).
    #[error("the record of {0} cannot be read as a record")]
    UnreadableRecord(crate::id::ItemId),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => Error::NotFound,
            StoreError::Precondition => Error::PreconditionFailed,
            StoreError::NotSupported(_) => Error::NotSupported(
                "this store cannot do conditional updates (If-Match); send the update without it"
                    .into(),
            ),
            other => Error::Store(other),
        }
    }
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::InvalidName(_)
            | Error::InvalidId(_)
            | Error::MalformedPath(_)
            | Error::FutureId { .. } => ErrorCode::InvalidName,
            Error::InvalidBody(_) | Error::MalformedBody(_) | Error::BadValidator(_) => {
                ErrorCode::InvalidBody
            }
            Error::Unauthenticated(_) => ErrorCode::Unauthenticated,
            Error::Forbidden(_) | Error::NotOwner => ErrorCode::Forbidden,
            Error::NotFound => ErrorCode::NotFound,
            Error::PreconditionFailed => ErrorCode::PreconditionFailed,
            Error::IdsTaken { .. } => ErrorCode::Conflict,
            Error::TooLarge(_) => ErrorCode::TooLarge,
            Error::NotSupported(_) => ErrorCode::NotSupported,
            Error::TooManyStreams(_) => ErrorCode::Busy,
            Error::Store(_) | Error::UnreadableRecord(_) => ErrorCode::StoreUnavailable,
        }
    }
}

tokio::task_local! {
    /// The id of the request being served (its `X-Request-Id`), set by `http` for each request.
    static REQUEST_ID: String;
}

/// Run `f` as the handling of the request with this id.
pub async fn with_request_id<F: std::future::Future>(id: String, f: F) -> F::Output {
    REQUEST_ID.scope(id, f).await
}

/// The id of the request being served, or `-` outside of one.
pub fn request_id() -> String {
    REQUEST_ID
        .try_with(String::clone)
        .unwrap_or_else(|_| "-".into())
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        let code = e.code();
        if code.http_status() < 500 {
            return ApiError::new(code, e.to_string());
        }
        let id = request_id();
        let status = code.http_status();
        if matches!(e, Error::Store(_) | Error::UnreadableRecord(_)) {
            tracing::error!(request_id = %id, status, error = %e, "answered with a server error");
        } else {
            tracing::warn!(request_id = %id, status, error = %e, "answered with a server error");
        }
        let message = match e {
            Error::Store(_) => "the object store did not answer; try again in a moment".to_string(),
            Error::UnreadableRecord(_) => {
                "the item's record cannot be read by this server".to_string()
            }
            // Our own words, no detail from outside.
            other => other.to_string(),
        };
        ApiError::new(code, format!("{message} (request id {id})"))
    }
}
