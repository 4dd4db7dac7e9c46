//! The widget's calls to its server: `POST /api/recent`, `/api/dismiss`, `/api/looked` and
//! `/api/look`, the server functions of [`crate::api`], made with the browser's own `fetch` (the
//! first page and look may be a loader's drawing's answer instead: [`Prefetched`]). server_fn's
//! client would send the same JSON, but it brings an HTTP stack, a streams layer and a JSON parser
//! into the wasm: a third of the widget's bytes (issue 16). Here the browser parses the JSON
//! (`Response.json()`), and `decode` reads it into the model.
//!
//! Each widget calls its own server ([`Endpoint`]), with `Authorization: Bearer <token>` (so the
//! token never appears in a URL): widgets of several servers and several viewers can share one
//! page.

use crate::contract::names::route;
use crate::contract::{ApiError, ErrorCode, Filter, LastLook, RecentPage};
use crate::decode;
use leptos::prelude::{GetUntracked, RwSignal, Set};
use std::cell::RefCell;
use std::sync::Arc;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Where a widget's calls go and the token they carry.
pub struct Endpoint {
    /// The server's origin, without a trailing slash; empty for this page's own.
    pub server: Arc<str>,
    /// The current token: renewed through the host's `getToken`, or a new `data-pickup-token`.
    pub token: RwSignal<String>,
    /// The first page's drawing, asked for by a loader while the wasm was downloading: the
    /// answer of the first `recent` call, and then its look of the first `looked`.
    ahead: RefCell<Option<Prefetched>>,
    look_ahead: RefCell<Option<JsValue>>,
}

/// A drawing a loader asked for before the widget started (`GET …/drawing`, public/drawing.js):
/// its page and look are the widget's if it is what the widget would ask, with its token.
pub struct Prefetched {
    url: String,
    authorization: String,
    /// Resolves to `{status, body}`, the body parsed (null when it is not JSON).
    answer: js_sys::Promise,
}

impl Prefetched {
    /// What the loader left on the widget's element (`pickupPrefetch`), if anything.
    pub fn take_from(el: &web_sys::HtmlElement) -> Option<Prefetched> {
        let key = JsValue::from_str("pickupPrefetch");
        let left = js_sys::Reflect::get(el, &key).ok()?;
        let _ = js_sys::Reflect::delete_property(el, &key);
        Some(Prefetched {
            url: get(&left, "url").as_string()?,
            authorization: get(&left, "authorization").as_string()?,
            answer: get(&left, "answer").dyn_into().ok()?,
        })
    }
}

/// A field of a parsed JSON object (undefined when it has none).
fn get(v: &JsValue, name: &str) -> JsValue {
    js_sys::Reflect::get(v, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
}

/// A call's status and parsed JSON body (`None` when it is not JSON: a proxy's error page).
type Answer = (u16, Option<JsValue>);

impl Endpoint {
    pub fn new(server: &str, token: String, prefetched: Option<Prefetched>) -> Endpoint {
        Endpoint {
            server: server.trim_end_matches('/').into(),
            token: RwSignal::new(token),
            ahead: RefCell::new(prefetched),
            look_ahead: RefCell::default(),
        }
    }

    /// Calls carry `token` from now on. Set only if it is new: setting a signal to the value it
    /// has would still wake what tracks it (a fetch, a renewal timer).
    pub fn use_token(&self, token: String) {
        if self
            .token
            .try_get_untracked()
            .is_some_and(|now| now != token)
        {
            self.token.try_set(token);
        }
    }

    fn authorization(&self) -> Option<String> {
        self.token
            .try_get_untracked()
            .filter(|t| !t.is_empty())
            .map(|t| format!("Bearer {t}"))
    }

    /// The loader's drawing (once), if it is the first page of `ws` for `filter` and `cap`, asked
    /// with the current token.
    async fn ahead(&self, ws: &str, filter: Filter, cap: u32) -> Option<Answer> {
        let url = format!(
            "{}{}?filter={}&cap={cap}",
            self.server,
            route::fill(route::DRAWING, ws, None),
            filter.as_str()
        );
        let p = self
            .ahead
            .take()
            .filter(|p| p.url == url && Some(&p.authorization) == self.authorization().as_ref())?;
        let answer = JsFuture::from(p.answer).await.ok()?;
        let body = Some(get(&answer, "body")).filter(|b| !b.is_null_or_undefined());
        Some((get(&answer, "status").as_f64()? as u16, body))
    }

    /// The newest items of `ws` that the viewer may see; with `before` (the last id of the page
    /// the viewer has), the next page of older ones.
    pub async fn recent(
        &self,
        ws: &str,
        filter: Filter,
        cap: u32,
        before: Option<&str>,
    ) -> Result<RecentPage, ApiError> {
        if before.is_none() {
            if let Some(answer) = self.ahead(ws, filter, cap).await {
                return read(answer, &|v| {
                    *self.look_ahead.borrow_mut() = Some(get(v, "looked"));
                    decode::page(&get(v, "page"), filter, cap)
                });
            }
        }
        let before = before.map_or(JsValue::NULL, JsValue::from_str);
        let args = [
            ("ws", JsValue::from_str(ws)),
            ("filter", JsValue::from_str(filter.as_str())),
            ("cap", JsValue::from(cap)),
            ("before", before),
        ];
        self.post("/api/recent", &args, &|v| decode::page(v, filter, cap))
            .await
    }

    /// Hide one item for this viewer only.
    pub async fn dismiss(&self, ws: &str, id: &str) -> Result<(), ApiError> {
        let args = [("ws", JsValue::from_str(ws)), ("id", JsValue::from_str(id))];
        // The answer is JSON `null`.
        self.post("/api/dismiss", &args, &|v| v.is_null().then_some(()))
            .await
    }

    /// Pin (`pinned`) or unpin one item for this viewer only.
    pub async fn pin(&self, ws: &str, id: &str, pinned: bool) -> Result<(), ApiError> {
        let args = [
            ("ws", JsValue::from_str(ws)),
            ("id", JsValue::from_str(id)),
            ("pinned", JsValue::from_bool(pinned)),
        ];
        self.post("/api/pin", &args, &|v| v.is_null().then_some(()))
            .await
    }

    /// The viewer's last look at `ws`.
    pub async fn looked(&self, ws: &str) -> Result<LastLook, ApiError> {
        // The look that came with the first page, if it did.
        if let Some(look) = self.look_ahead.take().as_ref().and_then(decode::look) {
            return Ok(look);
        }
        let args = [("ws", JsValue::from_str(ws))];
        self.post("/api/looked", &args, &decode::look).await
    }

    /// The viewer looked at `ws` as it was at `at`; answers the look the server kept.
    pub async fn look(&self, ws: &str, at: &str) -> Result<LastLook, ApiError> {
        let args = [("ws", JsValue::from_str(ws)), ("at", JsValue::from_str(at))];
        self.post("/api/look", &args, &decode::look).await
    }

    /// POST `args` as a JSON object; the answer's JSON read with `read`, or, for an error
    /// status, as the [`ApiError`] the server sent.
    async fn post<T>(
        &self,
        path: &str,
        args: &[(&str, JsValue)],
        read_ok: &dyn Fn(&JsValue) -> Option<T>,
    ) -> Result<T, ApiError> {
        let answer = self.send(path, args).await.map_err(|e| {
            ApiError::new(
                ErrorCode::Transport,
                format!(
                    "the server could not be reached: {}",
                    said(&e).unwrap_or_else(|| "the request failed".into())
                ),
            )
        })?;
        read(answer, read_ok)
    }

    async fn send(&self, path: &str, args: &[(&str, JsValue)]) -> Result<Answer, JsValue> {
        let object = js_sys::Object::new();
        for (k, v) in args {
            js_sys::Reflect::set(&object, &JsValue::from_str(k), v)?;
        }
        let headers = web_sys::Headers::new()?;
        for (name, value) in crate::contract::names::CALL_HEADERS {
            headers.set(name, value)?;
        }
        if let Some(authorization) = self.authorization() {
            headers.set("Authorization", &authorization)?;
        }
        let init = web_sys::RequestInit::new();
        init.set_method("POST");
        init.set_headers(&headers);
        init.set_body(&js_sys::JSON::stringify(&object)?.into());
        let url = format!("{}{path}", self.server);
        let res: web_sys::Response =
            JsFuture::from(leptos::prelude::window().fetch_with_str_and_init(&url, &init))
                .await?
                .dyn_into()?;
        let json = JsFuture::from(res.json()?).await.ok();
        Ok((res.status(), json))
    }
}

/// An answer read with `read_ok`, or, for an error status, as the [`ApiError`] the server sent.
fn read<T>(answer: Answer, read_ok: &dyn Fn(&JsValue) -> Option<T>) -> Result<T, ApiError> {
    let status = answer.0;
    read_ok(&ok_body(answer)?).ok_or_else(|| unreadable(status))
}

/// The body of a 2xx answer; else the [`ApiError`] the server sent.
fn ok_body((status, body): Answer) -> Result<JsValue, ApiError> {
    match body {
        Some(body) if (200..300).contains(&status) => Ok(body),
        Some(body) => Err(decode::error(&body).unwrap_or_else(|| unreadable(status))),
        None => Err(unreadable(status)),
    }
}

fn unreadable(status: u16) -> ApiError {
    ApiError::new(
        ErrorCode::Transport,
        format!("the server's answer ({status}) could not be read"),
    )
}

/// What a rejected promise (a failed `fetch`, getToken) said: an error's message, or a string.
pub fn said(v: &JsValue) -> Option<String> {
    v.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| v.as_string())
}
