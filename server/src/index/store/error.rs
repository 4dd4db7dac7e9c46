//! What a store operation can answer besides success, typed so callers match on meaning.

use std::error::Error as _;
use std::sync::Arc;
use thiserror::Error;

/// A store operation's failure. Cheap to clone (sources are shared), so the read cache can
/// hand one failed load to every request that waited on it.
#[derive(Debug, Clone, Error)]
pub enum StoreError {
    /// The store or the way to it failed (a dropped connection, a timeout, a 5xx, a 429): the
    /// request was fine, try again later. Never means "empty".
    #[error("the object store did not answer: {0}")]
    Unavailable(#[source] Arc<object_store::Error>),
    /// The store answered and will answer the same again (a 400, refused credentials or
    /// permissions, a bucket or container that does not exist): trying again does not help,
    /// an operator must fix the settings.
    #[error("the store refused: {0}")]
    Refused(#[source] Arc<object_store::Error>),
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
    /// An object whose bytes are not what Pickup writes under its key (a look whose body does
    /// not parse): an error, never taken for the key's absence.
    #[error("the object {key} cannot be read as Pickup writes it: {reason}")]
    Unreadable { key: String, reason: String },
}

pub(crate) type Result<T, E = StoreError> = std::result::Result<T, E>;

impl StoreError {
    /// What kind of refusal this is, in words with no endpoint or path in them (for
    /// `/readyz`, which anyone who can reach the server may read).
    pub fn refusal(&self) -> &'static str {
        let StoreError::Refused(e) = self else {
            return "not a refusal";
        };
        match &**e {
            object_store::Error::PermissionDenied { .. } => {
                "the credentials lack permission for the bucket or container"
            }
            object_store::Error::Unauthenticated { .. } => "the credentials were not accepted",
            object_store::Error::Generic { source, .. }
                if source.to_string().contains("does not exist") =>
            {
                "the bucket or container does not exist"
            }
            _ => "the store answered the request as one it will not serve",
        }
    }
}

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
            other if is_transient(&other) => StoreError::Unavailable(Arc::new(other)),
            other => StoreError::Refused(Arc::new(other)),
        }
    }
}

/// A fault worth trying again: the store or the way to it failed, not the request. Errors with
/// a meaning (not found, exists, precondition, not implemented, denied) are answers, not faults;
/// so is a `Generic` error that carries a refusal status ([`fault_of`]).
pub(super) fn is_transient(e: &object_store::Error) -> bool {
    match e {
        object_store::Error::JoinError { .. } => true,
        object_store::Error::Generic { .. } => fault_of(e) != Fault::Refusal,
        _ => false,
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Fault {
    /// No answer came (connect, timeout, reset), or the store said "later" (5xx, 408, 429).
    Transient,
    /// The store answered with a status that will not change by asking again.
    Refusal,
}

/// What a `Generic` error of object_store's HTTP clients is. object_store keeps its
/// `RetryError` (which holds the status) private, but exposes [`object_store::client::HttpError`]
/// for transport failures; a status failure is its `RequestError::Status`, whose text is
/// "Server returned non-2xx status code: {status}" (object_store 0.14 `client/retry.rs`). What
/// is neither (a credentials provider's failure, a body that would not decode) counts as
/// transient: wrongly retrying costs seconds, wrongly refusing would stop a healthy server.
fn fault_of(e: &object_store::Error) -> Fault {
    let mut current: Option<&(dyn std::error::Error + 'static)> = e.source();
    while let Some(err) = current {
        if err.is::<object_store::client::HttpError>() {
            return Fault::Transient;
        }
        if let Some(status) = status_in(&err.to_string()) {
            let later = status >= 500 || status == 408 || status == 429;
            return if later {
                Fault::Transient
            } else {
                Fault::Refusal
            };
        }
        current = err.source();
    }
    Fault::Transient
}

/// The HTTP status a failed request's text names, if it names one.
fn status_in(text: &str) -> Option<u16> {
    const MARKER: &str = "Server returned non-2xx status code: ";
    let rest = &text[text.find(MARKER)? + MARKER.len()..];
    rest.get(..3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_read_from_object_stores_text() {
        let t = "Error performing PUT http://127.0.0.1:1/b/k in 2ms - Server returned non-2xx status code: 400 Bad Request: <Error/>";
        assert_eq!(status_in(t), Some(400));
        assert_eq!(
            status_in("Server returned non-2xx status code: 503 Service Unavailable"),
            Some(503)
        );
        assert_eq!(status_in("error sending request"), None);
    }

    #[test]
    fn refusals_are_not_transient() {
        #[derive(Debug, thiserror::Error)]
        #[error("Error performing PUT x in 1ms - Server returned non-2xx status code: {0} X: body")]
        struct Status(u16);
        let generic = |status| object_store::Error::Generic {
            store: "S3",
            source: Box::new(Status(status)),
        };
        for refused in [400, 404, 405, 411] {
            assert!(!is_transient(&generic(refused)), "{refused}");
            assert!(matches!(
                StoreError::from(generic(refused)),
                StoreError::Refused(_)
            ));
        }
        for later in [500, 502, 503, 408, 429] {
            assert!(is_transient(&generic(later)), "{later}");
        }
        let denied = object_store::Error::PermissionDenied {
            path: "k".into(),
            source: Box::new(Status(403)),
        };
        assert!(!is_transient(&denied));
        assert!(StoreError::from(denied)
            .to_string()
            .starts_with("the store refused: "));
    }
}
