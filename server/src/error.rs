//! The server's one error enum: the index's refusals ([`IndexError`]) and those of the doors
//! (tokens, paths, bodies, streams). It becomes the contract's [`ApiError`] (code and message)
//! here, for both doors (REST routes and server functions); the HTTP status comes from the code
//! ([`app::contract::ErrorCode::http_status`]), the one place statuses are chosen.
//!
//! A 5xx never shows the client what went wrong inside (a store's error names paths, buckets
//! and endpoints): the client gets a generic message with the request's id, and the log gets
//! the detail with the same id.

use crate::index::{BodyError, IdError, IndexError, NameError};
use app::contract::{ApiError, ErrorCode};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error("invalid path: {0}")]
    MalformedPath(String),
    #[error("{0}")]
    MalformedBody(String),
    #[error("{0}")]
    Unauthenticated(String),
    /// The same answer whether or not the workspace or item exists.
    #[error("this token does not grant {0} on that workspace")]
    Forbidden(&'static str),
    #[error("the request body is larger than {0} bytes")]
    TooLarge(usize),
    #[error("{0}")]
    NotSupported(String),
    /// As many live streams as this server allows are open.
    #[error("this server has {0} live streams open, as many as it allows: poll instead, and try the stream again later")]
    TooManyStreams(usize),
    /// This workspace, or this viewer, has as many live streams open as its share allows.
    #[error("{workspace} live streams of this workspace and {viewer} of this viewer are open, as many as this server allows: poll instead, and try the stream again later")]
    TooManyStreamsHere { workspace: usize, viewer: usize },
}

pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;

macro_rules! through_the_index {
    ($($from:ty),*) => {$(
        impl From<$from> for Error {
            fn from(e: $from) -> Self {
                Error::Index(IndexError::from(e))
            }
        }
    )*};
}
through_the_index!(NameError, IdError, BodyError);

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Index(e) => e.code(),
            Error::MalformedPath(_) => ErrorCode::InvalidName,
            Error::MalformedBody(_) => ErrorCode::InvalidBody,
            Error::Unauthenticated(_) => ErrorCode::Unauthenticated,
            Error::Forbidden(_) => ErrorCode::Forbidden,
            Error::TooLarge(_) => ErrorCode::TooLarge,
            Error::NotSupported(_) => ErrorCode::NotSupported,
            Error::TooManyStreams(_) | Error::TooManyStreamsHere { .. } => ErrorCode::Busy,
        }
    }
}

tokio::task_local! {
    /// The id of the request being served (its `X-Request-Id`), set by `http` for each request.
    static REQUEST_ID: String;
}

/// Run `f` as the handling of the request with this id.
pub(crate) async fn with_request_id<F: std::future::Future>(id: String, f: F) -> F::Output {
    REQUEST_ID.scope(id, f).await
}

/// The id of the request being served, or `-` outside of one.
pub(crate) fn request_id() -> String {
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
        let store_fault = matches!(&e, Error::Index(i) if i.is_store_fault());
        if store_fault {
            tracing::error!(request_id = %id, status, error = %e, "answered with a server error");
        } else {
            tracing::warn!(request_id = %id, status, error = %e, "answered with a server error");
        }
        let message = match e {
            Error::Index(e) if e.refusal().is_some() => {
                "the store refused: an operator must fix the server's store settings (its log says what the store answered)".to_string()
            }
            Error::Index(e) if e.is_unreadable_object() => {
                "an object in the store cannot be read by this server (its log says which)"
                    .to_string()
            }
            Error::Index(IndexError::Store(_)) => {
                "the object store did not answer; try again in a moment".to_string()
            }
            Error::Index(IndexError::UnreadableRecord(_)) => {
                "the item's record cannot be read by this server".to_string()
            }
            // Our own words, no detail from outside.
            other => other.to_string(),
        };
        ApiError::new(code, format!("{message} (request id {id})"))
    }
}
