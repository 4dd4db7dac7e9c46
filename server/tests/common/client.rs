//! The one client of the tests that speak HTTP to Pickup: the same calls whether the server is
//! the app in this process (`router`, answered with `tower::ServiceExt::oneshot`) or a socket
//! (`url`: a [`super::in_process::Served`] app or a `pickup serve` child). What a test asserts
//! then does not depend on how it reaches the server.

use super::server::SECRET;
use app::contract::{ItemRecord, RecentPage};
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode};
use axum::Router;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use std::time::Duration;
use tower::ServiceExt;

/// A token signed with the test secret for `sub` in the workspaces `ws` (comma-separated),
/// valid for two hours; with `write`, a producer's. The claims `pickup token` writes, minted
/// here so a test needs no process for it.
pub fn token(sub: &str, ws: &str, write: bool) -> String {
    token_for(sub, ws, write, Duration::from_secs(7200))
}

pub fn token_for(sub: &str, ws: &str, write: bool, ttl: Duration) -> String {
    let ws: Vec<&str> = ws.split(',').collect();
    let scope = if write { "read write" } else { "read" };
    signed(&json!({"sub": sub, "ws": ws, "scope": scope, "exp": now_secs() + ttl.as_secs()}))
}

/// A token with exactly these claims, signed with the test secret.
pub fn signed(claims: &Value) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        claims,
        &jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes()).unwrap(),
    )
    .unwrap()
}

pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// An answer, read whole (but for a live stream's body).
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Answer {
    /// The body as JSON, `Null` when it is not JSON.
    pub fn value(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The body as `T`; panics (with the body) when it is not one.
    pub fn json<T: DeserializeOwned>(&self) -> T {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {} {}", self.status, self.text()))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// A header's value as text, if it is there.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }

    /// The `error` of a JSON refusal (`""` when there is none).
    pub fn error(&self) -> String {
        self.value()["error"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

#[derive(Clone)]
enum Transport {
    Router(Router),
    Http { base: String, http: reqwest::Client },
}

/// See the module's comment.
#[derive(Clone)]
pub struct TestClient {
    transport: Transport,
}

/// Long enough for a busy machine; a request that takes this long has failed.
const PATIENCE: Duration = Duration::from_secs(30);

impl TestClient {
    /// The server at `base` (`http://127.0.0.1:PORT`).
    pub fn url(base: &str) -> TestClient {
        let http = reqwest::Client::builder()
            .timeout(PATIENCE)
            .no_proxy()
            .build()
            .unwrap();
        Self::with_http(base, http)
    }

    /// The server at `base`, through `http` (a client of the test's own settings).
    pub fn with_http(base: &str, http: reqwest::Client) -> TestClient {
        TestClient {
            transport: Transport::Http {
                base: base.trim_end_matches('/').to_string(),
                http,
            },
        }
    }

    /// The app itself, called in this process.
    pub fn router(router: Router) -> TestClient {
        TestClient {
            transport: Transport::Router(router),
        }
    }

    /// A request to `path` (and query), to finish with [`Call::send`].
    pub fn request(&self, method: Method, path: &str) -> Call<'_> {
        Call {
            client: self,
            request: Request::builder().method(method).uri(path),
            body: Bytes::new(),
        }
    }

    pub fn get(&self, path: &str) -> Call<'_> {
        self.request(Method::GET, path)
    }

    pub fn post(&self, path: &str) -> Call<'_> {
        self.request(Method::POST, path)
    }

    /// One request with an optional token and JSON body: the status and the JSON answer
    /// (`Null` when it is not JSON).
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> (StatusCode, Value) {
        let mut call = self.request(method, path).token(token);
        if let Some(b) = body {
            call = call.json(b);
        }
        let answer = call.send().await;
        (answer.status, answer.value())
    }

    /// `POST /items` of `body` as `token`: the raw answer.
    pub async fn registered(&self, token: &str, ws: &str, body: &impl Serialize) -> Answer {
        self.post(&path::items(ws))
            .bearer(token)
            .json(body)
            .send()
            .await
    }

    /// Registers the running item `key` (titled `item {key}`), which must be accepted.
    pub async fn register(&self, token: &str, ws: &str, key: &str) -> ItemRecord {
        let body = json!({"key": key, "title": format!("item {key}"), "status": "running"});
        let answer = self.registered(token, ws, &body).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text());
        answer.json()
    }

    /// `PUT /items/{id}` of `body` as `token`.
    pub async fn update(&self, token: &str, ws: &str, id: &str, body: &impl Serialize) -> Answer {
        self.request(Method::PUT, &path::item(ws, id))
            .bearer(token)
            .json(body)
            .send()
            .await
    }

    /// `GET /items/{id}` as `token`.
    pub async fn item(&self, token: &str, ws: &str, id: &str) -> Answer {
        self.get(&path::item(ws, id)).bearer(token).send().await
    }

    /// `DELETE /items/{id}` as `token`.
    pub async fn remove(&self, token: &str, ws: &str, id: &str) -> Answer {
        self.request(Method::DELETE, &path::item(ws, id))
            .bearer(token)
            .send()
            .await
    }

    /// `GET /recent?{query}` as `token`: the raw answer.
    pub async fn page(&self, token: &str, ws: &str, query: &str) -> Answer {
        let path = format!("{}?{query}", path::recent(ws));
        self.get(&path).bearer(token).send().await
    }

    /// `GET /recent?{query}` as `token`, which must answer 200: the page.
    pub async fn recent(&self, token: &str, ws: &str, query: &str) -> RecentPage {
        let answer = self.page(token, ws, query).await;
        assert_eq!(
            answer.status,
            StatusCode::OK,
            "recent of {ws}: {}",
            answer.text()
        );
        answer.json()
    }

    /// The widget's server function `name`, its arguments a JSON object as the widget sends
    /// them (`cap` is a number).
    pub async fn server_fn(
        &self,
        name: &str,
        form: &[(&str, &str)],
        token: Option<&str>,
    ) -> Answer {
        let args: serde_json::Map<String, Value> = form
            .iter()
            .map(|(k, v)| match *k {
                "cap" => (k.to_string(), Value::from(v.parse::<u32>().unwrap())),
                "pinned" => (k.to_string(), Value::from(*v == "true")),
                _ => (k.to_string(), Value::from(*v)),
            })
            .collect();
        self.post(path::server_fn(name))
            .token(token)
            .json(&args)
            .send()
            .await
    }

    /// The status of `GET path`, with no token.
    pub async fn status(&self, path: &str) -> StatusCode {
        self.get(path).send().await.status
    }

    /// The answer to `request`; `Err` when it could not be sent or its answer did not come
    /// (only over a socket). A body that breaks off after the head is a failure of the test.
    async fn answer(&self, request: Request<Bytes>) -> Result<Answer, reqwest::Error> {
        match &self.transport {
            Transport::Router(router) => {
                let res = router
                    .clone()
                    .oneshot(request.map(Body::from))
                    .await
                    .unwrap();
                let (parts, body) = res.into_parts();
                let body = match is_stream(&parts.headers) {
                    true => Bytes::new(),
                    false => axum::body::to_bytes(body, usize::MAX).await.unwrap(),
                };
                Ok(Answer {
                    status: parts.status,
                    headers: parts.headers,
                    body,
                })
            }
            Transport::Http { base, http } => {
                let (mut parts, body) = request.into_parts();
                parts.uri = format!("{base}{}", parts.uri).parse().unwrap();
                let request = Request::from_parts(parts, body);
                let res = http
                    .execute(reqwest::Request::try_from(request).unwrap())
                    .await?;
                let (status, headers) = (res.status(), res.headers().clone());
                let body = match is_stream(&headers) {
                    true => Bytes::new(),
                    false => res.bytes().await.unwrap(),
                };
                Ok(Answer {
                    status,
                    headers,
                    body,
                })
            }
        }
    }
}

/// A live stream does not end: its head is the whole answer here (the stream tests read one
/// with `super::stream::Events`).
fn is_stream(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|t| t == "text/event-stream")
}

/// The contract's paths (`app::contract::names::route`, and the server functions' own), with
/// their names filled in as given: a test's hostile names too.
pub mod path {
    use app::contract::names::route;
    use leptos::server_fn::ServerFn;

    pub fn items(ws: &str) -> String {
        route::fill(route::ITEMS, ws, None)
    }
    pub fn item(ws: &str, id: &str) -> String {
        route::fill(route::ITEM, ws, Some(id))
    }
    pub fn dismiss(ws: &str, id: &str) -> String {
        route::fill(route::DISMISS, ws, Some(id))
    }
    pub fn pins(ws: &str) -> String {
        route::fill(route::PINS, ws, None)
    }
    pub fn pin(ws: &str, id: &str) -> String {
        route::fill(route::PIN, ws, Some(id))
    }
    pub fn recent(ws: &str) -> String {
        route::fill(route::RECENT, ws, None)
    }
    pub fn live(ws: &str) -> String {
        route::fill(route::LIVE, ws, None)
    }
    pub fn looked(ws: &str) -> String {
        route::fill(route::LOOKED, ws, None)
    }
    pub fn drawing(ws: &str) -> String {
        route::fill(route::DRAWING, ws, None)
    }
    /// The widget's server function `name` (`recent`, `dismiss`, `looked`, `look`).
    pub fn server_fn(name: &str) -> &'static str {
        match name {
            "recent" => <app::api::Recent as ServerFn>::PATH,
            "dismiss" => <app::api::Dismiss as ServerFn>::PATH,
            "looked" => <app::api::Looked as ServerFn>::PATH,
            "look" => <app::api::Look as ServerFn>::PATH,
            "pin" => <app::api::Pin as ServerFn>::PATH,
            other => panic!("no server function {other}"),
        }
    }
}

/// A request being built: headers, a token, a body.
pub struct Call<'a> {
    client: &'a TestClient,
    request: axum::http::request::Builder,
    body: Bytes,
}

impl Call<'_> {
    pub fn header<K, V>(mut self, name: K, value: V) -> Self
    where
        HeaderName: TryFrom<K>,
        <HeaderName as TryFrom<K>>::Error: Into<axum::http::Error>,
        HeaderValue: TryFrom<V>,
        <HeaderValue as TryFrom<V>>::Error: Into<axum::http::Error>,
    {
        self.request = self.request.header(name, value);
        self
    }

    pub fn bearer(self, token: &str) -> Self {
        self.header(header::AUTHORIZATION, format!("Bearer {token}"))
    }

    pub fn token(self, token: Option<&str>) -> Self {
        match token {
            Some(t) => self.bearer(t),
            None => self,
        }
    }

    pub fn json(mut self, body: &impl Serialize) -> Self {
        self.body = serde_json::to_vec(body).unwrap().into();
        self.header(header::CONTENT_TYPE, "application/json")
    }

    /// A body sent as it is, `Content-Type: application/json` (malformed on purpose, often).
    pub fn raw_json(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self.header(header::CONTENT_TYPE, "application/json")
    }

    pub async fn send(self) -> Answer {
        self.try_send().await.unwrap()
    }

    /// [`Call::send`] where the server may be going away: `Err` when no answer came.
    pub async fn try_send(self) -> Result<Answer, reqwest::Error> {
        let request = self.request.body(self.body).unwrap();
        self.client.answer(request).await
    }
}
