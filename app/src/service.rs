//! What the server provides to the server functions (through Leptos context): the service that
//! does the work, and the caller's raw bearer token, which the service itself verifies.

use crate::contract::{ApiError, Filter, LastLook, RecentPage};
use std::sync::Arc;

#[async_trait::async_trait]
pub trait Service: Send + Sync + 'static {
    async fn recent(
        &self,
        bearer: Option<&str>,
        ws: &str,
        filter: Filter,
        cap: Option<u32>,
        before: Option<&str>,
    ) -> Result<RecentPage, ApiError>;

    async fn dismiss(&self, bearer: Option<&str>, ws: &str, id: &str) -> Result<(), ApiError>;

    async fn pin(
        &self,
        bearer: Option<&str>,
        ws: &str,
        id: &str,
        pinned: bool,
    ) -> Result<(), ApiError>;

    async fn looked(&self, bearer: Option<&str>, ws: &str) -> Result<LastLook, ApiError>;

    async fn look(&self, bearer: Option<&str>, ws: &str, at: &str) -> Result<LastLook, ApiError>;
}

#[derive(Clone)]
pub struct ServiceHandle(pub Arc<dyn Service>);

/// The token from the request's `Authorization: Bearer` header, not yet verified.
#[derive(Clone, Debug, Default)]
pub struct Bearer(pub Option<String>);
