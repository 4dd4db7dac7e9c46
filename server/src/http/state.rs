//! What every handler shares: the service, and the size a body may have.

use crate::service::Pickup;
use app::service::ServiceHandle;

/// Larger bodies get 413 before they are read: a record is a few hundred bytes.
pub(crate) const MAX_BODY_BYTES: usize = 64 * 1024;

#[derive(Clone)]
pub struct AppState {
    pub pickup: Pickup,
    /// The same service, as the server functions take it from context (made once, not per call).
    pub handle: ServiceHandle,
}
