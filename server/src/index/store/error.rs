//! What a store operation can answer besides success, typed so callers match on meaning.

use std::sync::Arc;
use thiserror::Error;

/// A store operation's failure. Cheap to clone (sources are shared), so the read cache can
/// hand one failed load to every request that waited on it.
#[derive(Debug, Clone, Error)]
pub enum StoreError {
    /// The store or the way to it failed (a dropped connection, a timeout, a 5xx, refused
    /// credentials): the request was fine, try again later. Never means "empty".
    #[error("the object store did not answer: {0}")]
    Unavailable(#[source] Arc<object_store::Error>),
    /// The key does not exist.
    #[error("no such key")]
    NotFound,
    /// A create-only write met a key that exists.
    #[error("the key exists already")]
    Exists,
    /// A conditional write met a version other than the one expected.
    #[error("the object changed since the version given")]
    Precondition,
    /// This store cannot do what was asked (a conditional update on the local file system).
    #[error("this object store cannot do that: {0}")]
    NotSupported(#[source] Arc<object_store::Error>),
    /// An object larger than any Pickup writes: not read (what put it there is not Pickup).
    #[error("the object {key} is {size} bytes, more than the {limit} an object of Pickup's may be: not read")]
    TooLarge { key: String, size: u64, limit: u64 },
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

impl From<object_store::Error> for StoreError {
    fn from(e: object_store::Error) -> Self {
        use object_store::Error as E;
        match e {
            E::NotFound { .. } => StoreError::NotFound,
            E::AlreadyExists { .. } => StoreError::Exists,
            E::Precondition { .. } => StoreError::Precondition,
            E::NotImplemented { .. } | E::NotSupported { .. } => {
                StoreError::NotSupported(Arc::new(e))
            }
            other => StoreError::Unavailable(Arc::new(other)),
        }
    }
}

/// A fault worth trying again: the store or the way to it failed, not the request. Errors with
/// a meaning (not found, exists, precondition, not implemented, denied) are answers, not faults.
pub fn is_transient(e: &object_store::Error) -> bool {
    matches!(
        e,
        object_store::Error::Generic { .. } | object_store::Error::JoinError { .. }
    )
}
