//! The server's one error enum. It becomes the contract's [`ApiError`] (code and message) here;
//! the HTTP status comes from the code ([`app::error::ErrorCode::http_status`]).

use crate::id::IdError;
use crate::names::NameError;
use crate::record::BodyError;
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
    #[error("the object store did not answer: {0}")]
    Store(object_store::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<object_store::Error> for Error {
    fn from(e: object_store::Error) -> Self {
        match e {
            object_store::Error::NotFound { .. } => Error::NotFound,
            object_store::Error::Precondition { .. } => Error::PreconditionFailed,
            object_store::Error::NotImplemented { .. } => Error::NotSupported(
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
            Error::Store(_) => ErrorCode::StoreUnavailable,
        }
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        ApiError::new(e.code(), e.to_string())
    }
}
