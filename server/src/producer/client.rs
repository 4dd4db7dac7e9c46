//! The REST API as producers call it (`POST`, `PUT`, `GET`, `DELETE` of an item, and the
//! caller's own recent items), with errors that say whether trying again can help and whether
//! a request that failed may still have been applied.

use crate::peer::{printable, read_bounded, AnswerError};
use app::contract::names::route;
use app::contract::{ApiError, Card, Filter, ItemRecord, ItemUpdate, NewItem, RecentPage};
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use std::time::Duration;
use thiserror::Error;
use url::Url;

/// A request unanswered after this is given up (and may have been applied: see
/// [`ClientError::NoAnswer`]). The server answers 408 after its own 30 s by default.
pub(super) const REQUEST_TIMEOUT: Duration = Duration::from_secs(35);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// A success answer larger than this is refused: the largest the API sends (a page of 50
/// cards) is well under 100 KB.
const MAX_ANSWER_BYTES: usize = 1 << 20;
/// Of an error answer only this much is read: enough for Pickup's `{"error", "message"}` and
/// the start of a proxy's page.
const MAX_ERROR_BYTES: usize = 64 * 1024;

#[derive(Debug, Error)]
pub(crate) enum ClientError {
    #[error("PICKUP_URL {0:?} is not the server's address: write e.g. https://pickup.example.com or http://127.0.0.1:3000")]
    BadUrl(String),
    #[error("PICKUP_TOKEN is empty: mint one with `pickup token --sub ci-bot --ws WS --write`")]
    NoToken,
    /// The request never reached the server (connection refused, DNS, TLS): nothing happened.
    #[error("cannot reach {url}: {source}")]
    Unreachable {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    /// The request was sent and no answer came: it may or may not have been applied.
    #[error("no answer from {url}: {source}")]
    NoAnswer {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    /// A 4xx the caller can only fix by changing something (the token, a name, the body).
    #[error("{url} refused the request ({status}): {message}")]
    Refused {
        url: String,
        status: u16,
        message: String,
    },
    /// A 5xx, 408, 429, or 409 on a registration (its ids were taken this millisecond).
    #[error("{url} could not answer ({status}): {message}")]
    Unavailable {
        url: String,
        status: u16,
        message: String,
    },
    #[error("{url} answered something that is not Pickup's API: {detail}")]
    BadAnswer { url: String, detail: String },
    /// A redirect, never followed: the token would go with it, and Pickup's API never
    /// redirects (a proxy in front does, or the address is wrong).
    #[error("{url} redirected ({status}) to {location}: redirects are not followed (the token would go along); give the server's own address in PICKUP_URL")]
    Redirected {
        url: String,
        status: u16,
        location: String,
    },
    /// The answer went past [`MAX_ANSWER_BYTES`]; reading stopped there.
    #[error("{url} answered more than {limit} bytes: not Pickup's API")]
    TooLarge { url: String, limit: usize },
}

impl ClientError {
    /// Whether the same request may succeed later.
    pub(crate) fn is_transient(&self) -> bool {
        matches!(
            self,
            ClientError::Unreachable { .. }
                | ClientError::NoAnswer { .. }
                | ClientError::Unavailable { .. }
        )
    }

    /// Whether the server may have applied the request although no answer said so: no answer
    /// at all, a 408 (the server finishes a write whose request timed out), or a 5xx (a proxy's
    /// 502 or 504 after the server got the request; a store fault after part of a write).
    pub(crate) fn may_have_applied(&self) -> bool {
        match self {
            ClientError::NoAnswer { .. } => true,
            ClientError::Unavailable { status, .. } => *status == 408 || *status >= 500,
            _ => false,
        }
    }

    /// The HTTP status of a refusal (404: the item is gone; 401: the token).
    pub(crate) fn status(&self) -> Option<u16> {
        match self {
            ClientError::Refused { status, .. } | ClientError::Unavailable { status, .. } => {
                Some(*status)
            }
            _ => None,
        }
    }
}

/// A client of one Pickup server, authenticated with one token.
#[derive(Clone)]
pub(crate) struct Client {
    http: reqwest::Client,
    base: Url,
    token: String,
}

impl Client {
    /// `server`: the server's base URL (a path prefix is kept); `token`: a JWT with write scope.
    pub(crate) fn new(server: &str, token: &str) -> Result<Self, ClientError> {
        let base = Url::parse(server.trim())
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
            .ok_or_else(|| ClientError::BadUrl(server.to_string()))?;
        let token = token.trim();
        if token.is_empty() {
            return Err(ClientError::NoToken);
        }
        let http = reqwest::Client::builder()
            // Not even to the same origin: see `ClientError::Redirected`.
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .user_agent(concat!("pickup/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ClientError::BadAnswer {
                url: server.to_string(),
                detail: format!("cannot build an HTTP client: {e}"),
            })?;
        Ok(Client {
            http,
            base,
            token: token.to_string(),
        })
    }

    /// The server's address as given.
    pub(crate) fn server(&self) -> &str {
        self.base.as_str()
    }

    /// `{base}` and one of the contract's routes, its `{ws}` and `{id}` filled in, each one
    /// path segment (escaped, never a `/`).
    fn url(&self, route: &str, ws: &str, id: Option<&str>) -> Url {
        let segments = route.trim_start_matches('/').split('/').map(|s| match s {
            "{ws}" => ws,
            "{id}" => id.expect("a route of an item is given its id"),
            s => s,
        });
        let mut url = self.base.clone();
        url.path_segments_mut()
            .expect("an http(s) URL has a path")
            .pop_if_empty()
            .extend(segments);
        url
    }

    /// Registers an item: its record (with the new `id`).
    pub(crate) async fn register(
        &self,
        ws: &str,
        item: &NewItem,
    ) -> Result<ItemRecord, ClientError> {
        Ok(self.register_expiring(ws, item).await?.0)
    }

    /// [`Client::register`], with how long until the server's TTL deletes this run by its
    /// name (its `Pickup-Expires-In`; `None` from a server that does not say).
    pub(crate) async fn register_expiring(
        &self,
        ws: &str,
        item: &NewItem,
    ) -> Result<(ItemRecord, Option<Duration>), ClientError> {
        let url = self.url(route::ITEMS, ws, None);
        self.json_expiring(self.request(Method::POST, url).json(item), None)
            .await
    }

    /// Writes the whole record of `id`; `timeout` bounds this one request.
    pub(crate) async fn update(
        &self,
        ws: &str,
        id: &str,
        up: &ItemUpdate,
        timeout: Option<Duration>,
    ) -> Result<ItemRecord, ClientError> {
        Ok(self.update_expiring(ws, id, up, timeout).await?.0)
    }

    /// [`Client::update`], with the run's time left as [`Client::register_expiring`] gives it.
    pub(crate) async fn update_expiring(
        &self,
        ws: &str,
        id: &str,
        up: &ItemUpdate,
        timeout: Option<Duration>,
    ) -> Result<(ItemRecord, Option<Duration>), ClientError> {
        let url = self.url(route::ITEM, ws, Some(id));
        self.json_expiring(self.request(Method::PUT, url).json(up), timeout)
            .await
    }

    pub(crate) async fn get(&self, ws: &str, id: &str) -> Result<ItemRecord, ClientError> {
        let url = self.url(route::ITEM, ws, Some(id));
        self.json(self.request(Method::GET, url), None).await
    }

    pub(crate) async fn remove(&self, ws: &str, id: &str) -> Result<(), ClientError> {
        let url = self.url(route::ITEM, ws, Some(id));
        self.send(self.request(Method::DELETE, url), None)
            .await
            .map(drop)
    }

    /// The newest cards of `ws` (one per key, up to 50): the caller's own (`Filter::Mine`) or
    /// everyone's.
    pub(crate) async fn recent(&self, ws: &str, filter: Filter) -> Result<Vec<Card>, ClientError> {
        let mut url = self.url(route::RECENT, ws, None);
        url.query_pairs_mut()
            .append_pair("filter", filter.as_str())
            .append_pair("cap", "50");
        let page: RecentPage = self.json(self.request(Method::GET, url), None).await?;
        Ok(page.cards)
    }

    fn request(&self, method: Method, url: Url) -> reqwest::RequestBuilder {
        self.http.request(method, url).bearer_auth(&self.token)
    }

    async fn json<T: DeserializeOwned>(
        &self,
        req: reqwest::RequestBuilder,
        timeout: Option<Duration>,
    ) -> Result<T, ClientError> {
        Ok(self.json_expiring(req, timeout).await?.0)
    }

    async fn json_expiring<T: DeserializeOwned>(
        &self,
        req: reqwest::RequestBuilder,
        timeout: Option<Duration>,
    ) -> Result<(T, Option<Duration>), ClientError> {
        let (url, res) = self.send(req, timeout).await?;
        let expires_in = res
            .headers()
            .get(app::contract::EXPIRES_IN)
            .and_then(|v| v.to_str().ok()?.parse().ok())
            .map(Duration::from_secs);
        let bytes = match read_bounded(res, MAX_ANSWER_BYTES).await {
            Ok(bytes) => bytes,
            Err(AnswerError::TooLarge { limit }) => {
                return Err(ClientError::TooLarge { url, limit })
            }
            Err(AnswerError::Read(e)) => {
                return Err(ClientError::BadAnswer {
                    url,
                    detail: format!("the answer broke off: {e}"),
                })
            }
        };
        let answer = serde_json::from_slice(&bytes).map_err(|e| ClientError::BadAnswer {
            url,
            detail: e.to_string(),
        })?;
        Ok((answer, expires_in))
    }

    /// Sends `req`; a 2xx is the answer, anything else the error it means.
    async fn send(
        &self,
        req: reqwest::RequestBuilder,
        timeout: Option<Duration>,
    ) -> Result<(String, reqwest::Response), ClientError> {
        let req = match timeout {
            Some(t) => req.timeout(t),
            None => req,
        };
        let req = req.build().map_err(|e| ClientError::BadAnswer {
            url: self.base.to_string(),
            detail: format!("cannot build the request: {e}"),
        })?;
        let url = req.url().to_string();
        let method = req.method().clone();
        let res = self.http.execute(req).await.map_err(|source| {
            if source.is_connect() {
                ClientError::Unreachable {
                    url: url.clone(),
                    source,
                }
            } else {
                ClientError::NoAnswer {
                    url: url.clone(),
                    source,
                }
            }
        })?;
        let status = res.status();
        if status.is_success() {
            return Ok((url, res));
        }
        if status.is_redirection() {
            let location = res
                .headers()
                .get(reqwest::header::LOCATION)
                .map(|l| printable(&String::from_utf8_lossy(l.as_bytes())))
                .unwrap_or_else(|| "nowhere (no Location)".into());
            return Err(ClientError::Redirected {
                url,
                status: status.as_u16(),
                location,
            });
        }
        // Pickup's errors are `{"error", "message"}`; a proxy's may be anything. Either is the
        // peer's text, shown on a terminal: escaped.
        let message = match read_bounded(res, MAX_ERROR_BYTES).await {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                printable(
                    &serde_json::from_str::<ApiError>(&text)
                        .map(|e| e.message)
                        .unwrap_or_else(|_| text.chars().take(200).collect::<String>()),
                )
            }
            Err(e @ AnswerError::TooLarge { .. }) => format!("({e}: not read)"),
            Err(AnswerError::Read(e)) => format!("(the answer broke off: {})", printable(&e)),
        };
        let transient = status.is_server_error()
            || status == StatusCode::REQUEST_TIMEOUT
            || status == StatusCode::TOO_MANY_REQUESTS
            // Every id a registration tried was taken: the server says to send it again.
            || (status == StatusCode::CONFLICT && method == Method::POST);
        let status = status.as_u16();
        Err(if transient {
            ClientError::Unavailable {
                url,
                status,
                message,
            }
        } else {
            ClientError::Refused {
                url,
                status,
                message,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_keep_a_prefix_and_escape_names() {
        let c = Client::new("https://h.example/pickup/", "t").unwrap();
        assert_eq!(
            c.url(route::ITEM, "acme", Some("a/b")).as_str(),
            "https://h.example/pickup/api/v1/workspaces/acme/items/a%2Fb"
        );
        let c = Client::new("http://127.0.0.1:3000", "t").unwrap();
        assert_eq!(
            c.url(route::RECENT, "acme", None).as_str(),
            "http://127.0.0.1:3000/api/v1/workspaces/acme/recent"
        );
    }

    #[test]
    fn a_timeout_or_a_5xx_may_have_been_applied_a_refusal_or_429_not() {
        let unavailable = |status| ClientError::Unavailable {
            url: "u".into(),
            status,
            message: "m".into(),
        };
        for status in [408, 500, 502, 503, 504] {
            assert!(unavailable(status).may_have_applied(), "{status}");
        }
        assert!(!unavailable(429).may_have_applied());
        assert!(!unavailable(409).may_have_applied());
        let refused = ClientError::Refused {
            url: "u".into(),
            status: 403,
            message: "m".into(),
        };
        assert!(!refused.may_have_applied());
    }

    #[test]
    fn refuses_what_is_not_a_server_or_a_token() {
        for bad in ["", "127.0.0.1:3000", "ftp://x", "file:///tmp", "http://"] {
            assert!(
                matches!(Client::new(bad, "t"), Err(ClientError::BadUrl(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            Client::new("http://x", "  "),
            Err(ClientError::NoToken)
        ));
    }
}
