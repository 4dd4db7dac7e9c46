//! One widget's link to the page that embeds it: the element it lives in (where its events are
//! dispatched), its server and token ([`Endpoint`]), and the host's `getToken`, through which it
//! renews the token without a reload.
//!
//! Renewal: with `getToken`, the widget asks for a new token when 80% of the current one's
//! lifetime has passed since it was issued ([`crate::renewal`]), and after a call is refused
//! with 401; the refused call is then made once more with the new token.
//! Concurrent renewals share one call of `getToken`. Without `getToken` a token is renewed by
//! the host changing `data-pickup-token` (observed in `mount`); with it, a new
//! `data-pickup-token` also ends a renewal in flight, and getToken's later answer is dropped.

use crate::client::{said, Endpoint, Prefetched};
use crate::contract::{ApiError, Card, DomEvent, ErrorCode};
use crate::renewal::{self, Claims};
use leptos::prelude::*;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use web_sys::HtmlElement;

#[derive(Clone)]
struct Renewal {
    /// getToken's answer, or the host's token if that comes first.
    promise: js_sys::Promise,
    host_gave: js_sys::Function,
}

/// A loader's drawing of the first page (public/drawing.js), a child of the widget's element.
pub const DRAWING: &str = ":scope > [data-pickup-drawn]";

pub struct Host {
    pub element: HtmlElement,
    pub endpoint: Endpoint,
    get_token: Option<js_sys::Function>,
    /// While a renewal is in flight: the promise everyone who needs a token awaits, and how to
    /// settle it with a token the host gives meanwhile.
    renewing: RefCell<Option<Renewal>>,
    /// Bumped for each new token: a renewal timer of an older token stops.
    generation: Cell<u32>,
    /// The token issuer's clock less this tab's, in ms, as the last token getToken gave says.
    skew_ms: Cell<f64>,
    /// What `unmount()` stops besides the reactive owner: the stream, listeners, observers.
    stops: RefCell<Vec<Box<dyn FnOnce()>>>,
    /// The widget's "fetch now", for the host's `refresh()`.
    refresher: RefCell<Option<Box<dyn Fn()>>>,
}

impl Host {
    pub fn new(
        element: HtmlElement,
        server: String,
        token: String,
        get_token: Option<js_sys::Function>,
        prefetched: Option<Prefetched>,
    ) -> Rc<Host> {
        Rc::new(Host {
            element,
            endpoint: Endpoint::new(&server, token, prefetched),
            get_token,
            renewing: RefCell::default(),
            generation: Cell::new(0),
            skew_ms: Cell::new(0.0),
            stops: RefCell::default(),
            refresher: RefCell::default(),
        })
    }

    /// What the host's `refresh()` calls from now on.
    pub fn set_refresher(&self, refresh: impl Fn() + 'static) {
        *self.refresher.borrow_mut() = Some(Box::new(refresh));
    }

    /// The host asked for the cards now (`refresh()` on the element or on `mount`'s handle).
    pub fn refresh(&self) {
        if let Some(refresh) = self.refresher.borrow().as_ref() {
            refresh();
        }
    }

    /// Run `stop` when the host unmounts the widget.
    pub fn on_unmount(&self, stop: impl FnOnce() + 'static) {
        self.stops.borrow_mut().push(Box::new(stop));
    }

    /// Removes the loader's drawing of the first page, if it is still there (see `mount`).
    pub fn end_drawing(&self) {
        if let Ok(Some(drawing)) = self.element.query_selector(DRAWING) {
            drawing.remove();
        }
    }

    /// Stop what `on_unmount` registered, and any renewal timer.
    pub fn unmount(&self) {
        self.end_drawing();
        self.generation.set(self.generation.get().wrapping_add(1));
        for stop in self.stops.take() {
            stop();
        }
    }

    /// A token the host gave (a new `data-pickup-token`): used at once, and it ends a renewal
    /// in flight, whose getToken answer, if it comes later, is older.
    pub fn host_gave(&self, token: String) {
        self.endpoint.use_token(token.clone());
        if let Some(r) = self.renewing.borrow().as_ref() {
            let _ = r.host_gave.call1(&JsValue::UNDEFINED, &token.into());
        }
    }

    /// Whether the host gave a `getToken`.
    pub fn can_renew(&self) -> bool {
        self.get_token.is_some()
    }

    /// A new token from getToken (one call for everyone who asks meanwhile). An error is
    /// `unauthenticated`, with what getToken said.
    pub async fn renew(&self) -> Result<(), ApiError> {
        let Some(get_token) = self.get_token.clone() else {
            return Err(ApiError::new(
                ErrorCode::Unauthenticated,
                "the token expired or was refused, and there is no getToken to renew it",
            ));
        };
        // One call of getToken for everyone who asks meanwhile: a promise may be awaited often.
        let pending = self.renewing.borrow().clone();
        let Renewal { promise, .. } = match pending {
            Some(r) => r,
            None => {
                let answer = match get_token.call0(&JsValue::UNDEFINED) {
                    Ok(given) => js_sys::Promise::resolve(&given),
                    Err(thrown) => js_sys::Promise::reject(&thrown),
                };
                // A token the host gives meanwhile ends the wait: getToken may never answer.
                let mut host_gave = None;
                let given = js_sys::Promise::new(&mut |resolve, _| host_gave = Some(resolve));
                let r = Renewal {
                    promise: js_sys::Promise::race(&js_sys::Array::of2(&answer, &given)),
                    host_gave: host_gave.expect("a promise's executor runs at once"),
                };
                *self.renewing.borrow_mut() = Some(r.clone());
                r
            }
        };
        let got = JsFuture::from(promise.clone()).await;
        let mut renewing = self.renewing.borrow_mut();
        if renewing
            .as_ref()
            .is_some_and(|r| js_sys::Object::is(&r.promise, &promise))
        {
            *renewing = None;
        }
        drop(renewing);
        let token = got
            .map_err(|v| said(&v).unwrap_or_else(|| "it threw".into()))
            .and_then(|v| match v.as_string() {
                Some(t) if !t.trim().is_empty() => Ok(t.trim().to_string()),
                _ => Err("it gave no token (a non-empty string)".into()),
            });
        match token {
            Ok(t) => {
                // Minted just now: its issued-at is the issuer's now.
                let skew = claims(&t).and_then(|c| renewal::skew_ms(c, js_sys::Date::now()));
                if let Some(skew) = skew {
                    self.skew_ms.set(skew);
                }
                self.endpoint.use_token(t);
                Ok(())
            }
            Err(why) => Err(ApiError::new(
                ErrorCode::Unauthenticated,
                format!("getToken failed: {why}"),
            )),
        }
    }

    /// `call()`, and after a 401 (or before it, when there is no token yet) a renewal and one
    /// more try. Without getToken, `call()` alone.
    pub async fn call<T, F: Future<Output = Result<T, ApiError>>>(
        &self,
        call: impl Fn() -> F,
    ) -> Result<T, ApiError> {
        // A call a widget started before it was unmounted (one answer awaited another) is
        // not made: its token, like all its state, is gone.
        let Some(token) = self.endpoint.token.try_get_untracked() else {
            return Err(ApiError::new(
                ErrorCode::Transport,
                "the widget was unmounted",
            ));
        };
        if self.get_token.is_none() {
            return call().await;
        }
        if token.is_empty() {
            self.renew().await?;
        }
        let used = self.endpoint.token.try_get_untracked();
        match call().await {
            Err(e) if e.error == ErrorCode::Unauthenticated => {
                // Renewed while this call was out (the stream was refused the same token and
                // renewed it first): the new token is tried, not a second renewal.
                if self.endpoint.token.try_get_untracked() == used {
                    self.renew().await?;
                }
                call().await
            }
            other => other,
        }
    }

    /// Dispatch `event` on the host element (bubbling, composed, cancelable) with `detail`;
    /// false when a listener called `preventDefault()`.
    pub fn emit(&self, event: DomEvent, detail: &[(&str, JsValue)]) -> bool {
        // An unmounted widget tells its host nothing more (an answer that came after).
        if self.endpoint.token.is_disposed() {
            return true;
        }
        let object = js_sys::Object::new();
        for (k, v) in detail {
            let _ = js_sys::Reflect::set(&object, &JsValue::from_str(k), v);
        }
        let init = web_sys::CustomEventInit::new();
        init.set_bubbles(true);
        init.set_composed(true);
        init.set_cancelable(true);
        init.set_detail(&object);
        web_sys::CustomEvent::new_with_event_init_dict(event.name(), &init)
            .and_then(|e| self.element.dispatch_event(&e))
            .unwrap_or(true)
    }

    /// `pickup:open` for `card` (its id, key and link): false when the host cancelled it, and
    /// routes the link itself.
    pub fn open(&self, card: &Card) -> bool {
        let url = card.href().map_or(JsValue::NULL, |h| JsValue::from_str(&h));
        let detail = [
            ("id", JsValue::from_str(&card.id)),
            ("key", JsValue::from_str(&card.key)),
            ("url", url),
        ];
        self.emit(DomEvent::Open, &detail)
    }

    /// Whom the current token names (its `sub`, the user id the server takes it for): the
    /// owner of the viewer's own items.
    pub fn viewer(&self) -> Option<String> {
        let token = self.endpoint.token.try_get_untracked()?;
        js_sys::Reflect::get(&payload(&token)?, &JsValue::from_str("sub"))
            .ok()?
            .as_string()
    }

    /// How long `token` has until it expires (none without a readable `exp`).
    pub fn expires_in(&self, token: &str) -> Option<std::time::Duration> {
        renewal::until_expiry(claims(token)?, js_sys::Date::now(), self.skew_ms.get())
    }

    /// `pickup:error` with `{code, message}`.
    pub fn error(&self, e: &ApiError) {
        self.emit(
            DomEvent::Error,
            &[
                // As the server writes it: "unauthenticated", "store_unavailable", …
                ("code", e.error.as_str().into()),
                ("message", e.message.as_str().into()),
            ],
        );
    }

    /// Renew the current token at 80% of its lifetime since it was issued (with getToken; a
    /// token without `exp` is not renewed ahead). Called for each new token; the timer of an
    /// older one stops.
    pub fn schedule_renewal(self: &Rc<Self>) {
        let generation = self.generation.get().wrapping_add(1);
        self.generation.set(generation);
        if self.get_token.is_none() {
            return;
        }
        let Some(token) = self.endpoint.token.try_get_untracked() else {
            return;
        };
        let now = js_sys::Date::now();
        let Some(wait) = claims(&token).and_then(|c| renewal::wait(c, now, self.skew_ms.get()))
        else {
            return;
        };
        let host = self.clone();
        leptos::task::spawn_local(async move {
            gloo_timers::future::sleep(wait).await;
            if host.generation.get() != generation || host.endpoint.token.is_disposed() {
                return; // a newer token, or the widget is gone
            }
            // On failure the token still works for a while; the 401 that ends it renews again
            // and, if that fails too, shows the sign-in message.
            if let Err(e) = host.renew().await {
                host.error(&e);
            }
        });
    }
}

/// A JWT's payload, parsed (not verified: the server does that; this only times a renewal and
/// knows whose items are the viewer's own).
fn payload(token: &str) -> Option<JsValue> {
    let rest = &token[token.find('.')? + 1..];
    let payload = &rest[..rest.find('.')?];
    // base64url to base64, padded, for atob.
    let mut b64: String = payload
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    while !b64.len().is_multiple_of(4) {
        b64.push('=');
    }
    js_sys::JSON::parse(&window().atob(&b64).ok()?).ok()
}

/// A JWT's `exp` and `iat`.
fn claims(token: &str) -> Option<Claims> {
    let claims = payload(token)?;
    let claim = |name: &str| {
        js_sys::Reflect::get(&claims, &JsValue::from_str(name))
            .ok()?
            .as_f64()
    };
    Some(Claims {
        exp: claim("exp")?,
        iat: claim("iat"),
    })
}
