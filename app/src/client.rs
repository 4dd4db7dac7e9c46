//! The widget's two calls to its server: `POST /api/recent` and `POST /api/dismiss`, the server
//! functions of [`crate::api`], made with the browser's own `fetch`. server_fn's client would
//! send the same JSON, but it brings an HTTP stack, a streams layer and a JSON parser into the
//! wasm: a third of the widget's bytes (issue 16). Here the browser parses the JSON
//! (`Response.json()`), and `decode` reads it into the model.
//!
//! Each widget calls its own server ([`Endpoint`]), with `Authorization: Bearer <token>` (so the
//! token never appears in a URL): widgets of several servers and several viewers can share one
//! page.

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
    /// The first page, asked for by the loader (`pickup.js`) while the wasm was downloading.
    pub prefetched: RefCell<Option<Prefetched>>,
}

/// A request the loader made before the widget started: the widget's first call takes its
/// answer if it is the same request, once.
pub struct Prefetched {
    url: String,
    body: String,
    authorization: String,
    response: js_sys::Promise,
}

impl Prefetched {
    /// What the loader left on the widget's element (`pickupPrefetch`), if anything.
    pub fn take_from(el: &web_sys::HtmlElement) -> Option<Prefetched> {
        let key = JsValue::from_str("pickupPrefetch");
        let left = js_sys::Reflect::get(el, &key).ok()?;
        let _ = js_sys::Reflect::delete_property(el, &key);
        let text = |name: &str| {
            js_sys::Reflect::get(&left, &JsValue::from_str(name))
                .ok()?
                .as_string()
        };
        Some(Prefetched {
            url: text("url")?,
            body: text("body")?,
            authorization: text("authorization")?,
            response: js_sys::Reflect::get(&left, &JsValue::from_str("response"))
                .ok()?
                .dyn_into()
                .ok()?,
        })
    }
}

impl Endpoint {
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

    /// The newest items of `ws` that the viewer may see; with `before` (the last id of the page
    /// the viewer has), the next page of older ones.
    pub async fn recent(
        &self,
        ws: &str,
        filter: Filter,
        cap: u32,
        before: Option<&str>,
    ) -> Result<RecentPage, ApiError> {
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
        read: &dyn Fn(&JsValue) -> Option<T>,
    ) -> Result<T, ApiError> {
        let (status, body) = self.send(path, args).await.map_err(|e| {
            ApiError::new(
                ErrorCode::Transport,
                format!(
                    "the server could not be reached: {}",
                    said(&e).unwrap_or_else(|| "the request failed".into())
                ),
            )
        })?;
        let unreadable = || {
            ApiError::new(
                ErrorCode::Transport,
                format!("the server's answer ({status}) could not be read"),
            )
        };
        let Some(body) = body else {
            return Err(unreadable());
        };
        if (200..300).contains(&status) {
            read(&body).ok_or_else(unreadable)
        } else {
            Err(decode::error(&body).unwrap_or_else(unreadable))
        }
    }

    /// The status and the parsed JSON body (`None` when it is not JSON: a proxy's error page).
    async fn send(
        &self,
        path: &str,
        args: &[(&str, JsValue)],
    ) -> Result<(u16, Option<JsValue>), JsValue> {
        let object = js_sys::Object::new();
        for (k, v) in args {
            js_sys::Reflect::set(&object, &JsValue::from_str(k), v)?;
        }
        let body = String::from(js_sys::JSON::stringify(&object)?);
        let url = format!("{}{path}", self.server);
        let authorization = self
            .token
            .try_get_untracked()
            .filter(|t| !t.is_empty())
            .map(|t| format!("Bearer {t}"));
        let prefetched = self.prefetched.take().filter(|p| {
            (&p.url, &p.body, Some(&p.authorization)) == (&url, &body, authorization.as_ref())
        });
        let answered = match prefetched {
            Some(p) => JsFuture::from(p.response).await.ok(),
            None => None,
        };
        let res: web_sys::Response = match answered {
            Some(res) => res,
            // Not asked for ahead, or that request failed: ask now.
            None => {
                let headers = web_sys::Headers::new()?;
                for (name, value) in crate::contract::names::CALL_HEADERS {
                    headers.set(name, value)?;
                }
                if let Some(authorization) = &authorization {
                    headers.set("Authorization", authorization)?;
                }
                let init = web_sys::RequestInit::new();
                init.set_method("POST");
                init.set_headers(&headers);
                init.set_body(&JsValue::from_str(&body));
                JsFuture::from(leptos::prelude::window().fetch_with_str_and_init(&url, &init))
                    .await?
            }
        }
        .dyn_into()?;
        let json = JsFuture::from(res.json()?).await.ok();
        Ok((res.status(), json))
    }
}

/// What a rejected promise (a failed `fetch`, getToken) said: an error's message, or a string.
pub fn said(v: &JsValue) -> Option<String> {
    v.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| v.as_string())
}
