//! The one error type of Pickup's contract: `{"error": "<code>", "message": "<what to do>"}`.
//! The server maps it to an HTTP status here and nowhere else.

use super::read::readable;
use serde::{Deserialize, Serialize};
use thiserror::Error;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    InvalidName,
    InvalidBody,
    Unauthenticated,
    Forbidden,
    NotFound,
    PreconditionFailed,
    /// Every id a registration tried was taken in the same few milliseconds: send it again.
    Conflict,
    /// The viewer has as many pins in the workspace as they may: unpin one first.
    TooManyPins,
    TooLarge,
    NotSupported,
    StoreUnavailable,
    /// This server has as many live streams open as it allows: poll instead, try again later.
    Busy,
    /// A failure of the call itself (network, decoding): never sent by the server.
    Transport,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 13] = [
        ErrorCode::InvalidName,
        ErrorCode::InvalidBody,
        ErrorCode::Unauthenticated,
        ErrorCode::Forbidden,
        ErrorCode::NotFound,
        ErrorCode::PreconditionFailed,
        ErrorCode::Conflict,
        ErrorCode::TooManyPins,
        ErrorCode::TooLarge,
        ErrorCode::NotSupported,
        ErrorCode::StoreUnavailable,
        ErrorCode::Busy,
        ErrorCode::Transport,
    ];

    /// The code written `s` on the wire, if this version knows it.
    pub fn from_wire(s: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|code| code.as_str() == s)
    }

    /// The code as it is written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidName => "invalid_name",
            ErrorCode::InvalidBody => "invalid_body",
            ErrorCode::Unauthenticated => "unauthenticated",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::NotFound => "not_found",
            ErrorCode::PreconditionFailed => "precondition_failed",
            ErrorCode::Conflict => "conflict",
            ErrorCode::TooManyPins => "too_many_pins",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::NotSupported => "not_supported",
            ErrorCode::StoreUnavailable => "store_unavailable",
            ErrorCode::Busy => "busy",
            ErrorCode::Transport => "transport",
        }
    }

    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::InvalidName | ErrorCode::InvalidBody => 400,
            ErrorCode::Unauthenticated => 401,
            ErrorCode::Forbidden => 403,
            ErrorCode::NotFound => 404,
            ErrorCode::PreconditionFailed => 412,
            ErrorCode::Conflict | ErrorCode::TooManyPins => 409,
            ErrorCode::TooLarge => 413,
            ErrorCode::NotSupported => 501,
            ErrorCode::StoreUnavailable | ErrorCode::Busy => 503,
            ErrorCode::Transport => 502,
        }
    }
}

readable! {
#[derive(Clone, Debug, PartialEq, Eq, Error, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[error("{error:?}: {message}")]
pub struct ApiError {
    pub error: ErrorCode,
    pub message: String,
}
}

impl ApiError {
    pub fn new(error: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            error,
            message: message.into(),
        }
    }
}

impl leptos::server_fn::error::FromServerFnError for ApiError {
    type Encoder = leptos::server_fn::codec::JsonEncoding;

    fn from_server_fn_error(err: leptos::server_fn::error::ServerFnErrorErr) -> Self {
        use leptos::server_fn::error::ServerFnErrorErr as E;
        match err {
            E::Args(m) | E::Deserialization(m) => ApiError::new(ErrorCode::InvalidBody, m),
            other => ApiError::new(ErrorCode::Transport, other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_reads_back_from_its_wire_name_as_serde_writes_it() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
            assert_eq!(ErrorCode::from_wire(code.as_str()), Some(code));
        }
        assert_eq!(ErrorCode::from_wire("teapot"), None);
    }
}
