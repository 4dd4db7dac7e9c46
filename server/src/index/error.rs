//! What the index refuses or fails with. The server's [`crate::error::Error`] wraps it, so the
//! index never depends on the doors above it; each variant names its contract code here.

use super::core::id::{IdError, ItemId};
use super::core::names::NameError;
use super::core::record::BodyError;
use super::store::StoreError;
use app::contract::ErrorCode;
use thiserror::Error;

#[derive(Debug, Clone, Error)]
pub enum IndexError {
    #[error(transparent)]
    InvalidName(#[from] NameError),
    #[error("invalid item id: {0}")]
    InvalidId(#[from] IdError),
    #[error(transparent)]
    InvalidBody(#[from] BodyError),
    /// An `If-Match` that is present but is not a validator this server handed out.
    #[error("If-Match must be the ETag a GET or PUT of this item answered, as it was given")]
    BadValidator,
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
    /// A viewer's pin past the most they may have in a workspace.
    #[error("at most {0} pins per viewer and workspace: unpin one first")]
    TooManyPins(usize),
    #[error("{0}")]
    NotSupported(String),
    #[error(transparent)]
    Store(StoreError),
    /// `PICKUP_STORE` names no store this server can open (the message says what to fix).
    #[error("{0}")]
    StoreUrl(String),
    /// A record that exists but cannot be read as one (written by a newer version, damaged).
    #[error("the record of {0} cannot be read as a record")]
    UnreadableRecord(ItemId),
}

pub type Result<T, E = IndexError> = std::result::Result<T, E>;

impl From<StoreError> for IndexError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => IndexError::NotFound,
            StoreError::Precondition => IndexError::PreconditionFailed,
            StoreError::NotSupported(_) => IndexError::NotSupported(
                "this store cannot do conditional updates (If-Match); send the update without it"
                    .into(),
            ),
            other => IndexError::Store(other),
        }
    }
}

impl IndexError {
    pub fn code(&self) -> ErrorCode {
        match self {
            IndexError::InvalidName(_) | IndexError::InvalidId(_) | IndexError::FutureId { .. } => {
                ErrorCode::InvalidName
            }
            IndexError::InvalidBody(_) | IndexError::BadValidator => ErrorCode::InvalidBody,
            IndexError::NotOwner => ErrorCode::Forbidden,
            IndexError::NotFound => ErrorCode::NotFound,
            IndexError::PreconditionFailed => ErrorCode::PreconditionFailed,
            IndexError::IdsTaken { .. } => ErrorCode::Conflict,
            IndexError::TooManyPins(_) => ErrorCode::TooManyPins,
            IndexError::NotSupported(_) => ErrorCode::NotSupported,
            IndexError::Store(_) | IndexError::UnreadableRecord(_) => ErrorCode::StoreUnavailable,
            IndexError::StoreUrl(_) => ErrorCode::StoreUnavailable,
        }
    }

    /// A fault of the store's (or of what is in it), not of the request: logged as an error.
    pub fn is_store_fault(&self) -> bool {
        matches!(
            self,
            IndexError::Store(_) | IndexError::UnreadableRecord(_) | IndexError::StoreUrl(_)
        )
    }

    /// When the store refused (a bucket that does not exist, credentials it does not take: an
    /// operator must fix the settings), what kind of refusal, in words with no endpoint or
    /// path in them (for `/readyz`, which anyone who can reach the server reads).
    pub fn refusal(&self) -> Option<&'static str> {
        match self {
            IndexError::Store(e @ StoreError::Refused(_)) => Some(e.refusal()),
            _ => None,
        }
    }

    /// An object in the store that is not what Pickup writes under its key (a look whose body
    /// does not parse, an object too large to be one of Pickup's).
    pub fn is_unreadable_object(&self) -> bool {
        matches!(
            self,
            IndexError::Store(StoreError::Unreadable { .. } | StoreError::TooLarge { .. })
        )
    }
}
