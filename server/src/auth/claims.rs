//! What a verified token's claims say: Pickup's own claims, and which claims of an identity
//! provider's token hold the workspaces, the name and the scope ([`ClaimMapping`]).

use super::caller::Caller;
use crate::error::{Error, Result};
use crate::index::{BodyError, UserId};
use app::contract::{stored_text, MAX_NAME_CHARS};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The claims of Pickup's own (HS256) tokens.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct TokenClaims {
    pub sub: String,
    #[serde(default)]
    pub name: Option<String>,
    pub ws: Vec<String>,
    pub scope: String,
    pub exp: u64,
    /// When it was issued: the widget renews a token at 80% of its lifetime since then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iat: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nbf: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iss: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aud: Option<String>,
}

/// Which claims of an identity provider's token say what (`PICKUP_WS_CLAIM`,
/// `PICKUP_WS_PREFIX`, `PICKUP_NAME_CLAIM`, `PICKUP_SCOPE_CLAIM`). A claim name is looked up
/// as it is first; if there is no such claim and the name has dots, as a path into nested
/// objects (`realm_access.roles`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimMapping {
    pub workspaces: String,
    pub workspace_prefix: Option<String>,
    pub name: String,
    pub scope: String,
}

impl Default for ClaimMapping {
    /// The claims of Pickup's own tokens.
    fn default() -> Self {
        ClaimMapping {
            workspaces: "ws".into(),
            workspace_prefix: None,
            name: "name".into(),
            scope: "scope".into(),
        }
    }
}

impl ClaimMapping {
    /// The caller these (verified) claims describe.
    pub(super) fn caller(&self, claims: &Map<String, Value>) -> Result<Caller> {
        let sub = claims
            .get("sub")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let user = UserId::parse(sub)
            .map_err(|e| Error::Unauthenticated(format!("the token's subject is invalid: {e}")))?;
        let expires_at = match claims.get("exp") {
            Some(Value::Number(n)) => n
                .as_u64()
                .or_else(|| n.as_f64().map(|f| f.max(0.0) as u64))
                .unwrap_or(0),
            _ => 0,
        };
        let workspaces = values(claim(claims, &self.workspaces))
            .into_iter()
            .filter_map(|v| match &self.workspace_prefix {
                None => Some(v),
                Some(p) => v.strip_prefix(p.as_str()).map(str::to_string),
            })
            .collect();
        let can_write = values(claim(claims, &self.scope))
            .iter()
            .any(|s| s == "write");
        let chosen = [self.name.as_str(), "preferred_username"]
            .into_iter()
            .filter_map(|c| claim(claims, c).and_then(Value::as_str))
            .find(|n| !n.trim().is_empty());
        let name = match chosen {
            None => user.to_string(),
            Some(n) => stored_text(n, MAX_NAME_CHARS).ok_or_else(|| {
                Error::Unauthenticated(format!(
                    "the token's name was refused ({}); get a new one",
                    BodyError::OwnerName
                ))
            })?,
        };
        Ok(Caller {
            name,
            user,
            expires_at,
            workspaces,
            can_write,
        })
    }
}

/// The claim `name`: a top-level claim of that name, else the dotted path into nested objects.
fn claim<'a>(claims: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    if let Some(v) = claims.get(name) {
        return Some(v);
    }
    let mut parts = name.split('.');
    let mut at = claims.get(parts.next()?)?;
    for part in parts {
        at = at.as_object()?.get(part)?;
    }
    Some(at)
}

/// A claim's values: an array's strings, or a string's space-separated words.
fn values(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}
