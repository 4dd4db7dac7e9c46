//! The live stream: the server's pages as they change (`GET /api/v1/workspaces/{ws}/live`),
//! asked of the loader's share.js as data (the widget's view: server, workspace, filter, cap,
//! token): share.js opens it, or joins the browser's one stream (public/share.js), reads it with
//! `fetch` so the token travels in `Authorization`, never in a URL (an `EventSource` cannot
//! send headers), parses its server-sent events, and hands the widget each event as data: a
//! page as the browser's JSON.parse made it, a keep-alive as an event without a name. The
//! widget takes the pages of its own view, cut to its cap (`RecentPage::for_view`).
//!
//! The widget keeps polling whenever the stream is not up: blocked, failing, hidden, or an
//! old server that has no stream.

use crate::contract::{ApiError, Filter, LiveEvent, RecentPage};
use crate::host::Host;
use futures::future::Either;
use leptos::prelude::*;
use leptos::task::spawn_local;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Whether the widget's cards arrive live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liveness {
    /// Not known yet (the first connection is being made).
    Connecting,
    Live,
    /// Polling instead: the stream failed, was blocked, or this server has none.
    Polling,
}

/// How a stream ended.
enum End {
    /// The server asked for a new connection (it is stopping): reconnect now.
    Reconnect,
    /// The server said the token expired: renew it, or say so.
    Unauthenticated,
    /// The server refused the token (401): renew it if the host can; else it may pass (a key
    /// rotating, a server being upgraded), so back off and try again.
    Refused,
    /// Anything else (a network error, a refusal, an older server without streams, the store
    /// not answering, a stream cut short or gone silent, a page that cannot be read): poll,
    /// and try again after a while.
    Failed,
}

/// The server sends something (a keep-alive at least) every 15 s; this long without a byte,
/// the connection is dead though nobody closed it (a laptop that slept, a dropped NAT entry).
const SILENCE: Duration = Duration::from_secs(45);

/// The longest wait between two tries of a failing stream.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// The widget's stream: which filter it was opened for, how to end it, and the open stream
/// itself, which says whether this tab holds the browser's shared stream (whose tab shows the
/// notifications, `bell.rs`).
#[derive(Clone, Default)]
pub struct Handle {
    current: Rc<RefCell<Option<(Filter, web_sys::AbortController)>>>,
    feed: Rc<RefCell<Option<JsValue>>>,
    /// The widget shows the bell: with it on, a hidden tab keeps its stream.
    notify: bool,
}

impl Handle {
    /// End the open stream if it was opened for a filter other than `filter` (the loop opens
    /// one for `filter` at once); with `None`, end it whatever it was for.
    pub fn retune(&self, filter: Option<Filter>) {
        if let Some((f, abort)) = self.current.borrow().as_ref() {
            if filter != Some(*f) {
                abort.abort();
            }
        }
    }

    /// The stream open now (share.js's), if any.
    pub fn feed(&self) -> Option<JsValue> {
        self.feed.borrow().clone()
    }

    /// Whether the stream rests: the page is hidden, and this widget's bell is not on (with
    /// it on, a hidden tab keeps its stream, so that the viewer hears of their items ending).
    pub fn dozing(&self) -> bool {
        document().hidden() && !(self.notify && super::bell::bell() == super::bell::BellState::On)
    }

    /// Resolves once the stream may open again (checked twice a second: a hidden page has
    /// time).
    async fn wait_until_shown(&self) {
        while self.dozing() {
            gloo_timers::future::sleep(Duration::from_millis(500)).await;
        }
    }
}

/// What a widget's stream is of: its workspace and cap (the filter is the viewer's to change).
pub struct View {
    pub ws: String,
    pub cap: u32,
    pub notify: bool,
}

/// Keep a stream open while the widget lives and its page is visible (the widget ends it with
/// [`Handle::retune`] when the page is hidden); reconnect with back-off, and at once when
/// `retune` ends it for a new filter or the server ends it for a token that has since been
/// renewed. Each page goes to `on_page`. A refused token is renewed through the host's
/// `getToken`; if that fails, the error goes to `on_unauthenticated` and the loop backs off
/// (polling, with whatever token the host gives meanwhile, goes on).
pub fn follow(
    host: Rc<Host>,
    view: View,
    filter: RwSignal<Filter>,
    live: RwSignal<Liveness>,
    on_page: impl Fn(RecentPage) + Clone + 'static,
    on_unauthenticated: impl Fn(ApiError) + 'static,
) -> Handle {
    let handle = Handle {
        notify: view.notify,
        ..Handle::default()
    };
    let this = handle.clone();
    let token = host.endpoint.token;
    spawn_local(async move {
        let mut failures = 0u32;
        loop {
            if this.dozing() {
                // Closed while hidden; the first page after reopening catches up.
                this.wait_until_shown().await;
            }
            let (Some(f), Some(used)) = (filter.try_get_untracked(), token.try_get_untracked())
            else {
                return; // the widget is gone
            };
            // No token yet, only getToken: the stream waits for it (shared with the first
            // fetch's call), rather than open with an empty bearer that is sure to be refused.
            if used.is_empty() && host.can_renew() {
                match host.renew().await {
                    Ok(()) => continue,
                    Err(e) => on_unauthenticated(e),
                }
                back_off(&mut failures).await;
                continue;
            }
            let Ok(abort) = web_sys::AbortController::new() else {
                return;
            };
            *this.current.borrow_mut() = Some((f, abort.clone()));
            let on_page = on_page.clone();
            let got_a_page = std::cell::Cell::new(false);
            let end = read(&host, &view, f, &used, &abort, &this.feed, &mut |page| {
                got_a_page.set(true);
                live.try_set(Liveness::Live);
                on_page(page);
            })
            .await;
            if got_a_page.get() {
                failures = 0;
            }
            if live.try_set(Liveness::Polling).is_some() {
                return;
            }
            // Aborted for a new filter, or closed because the page was hidden: no back-off.
            if filter.try_get_untracked().is_some_and(|now| now != f) || this.dozing() {
                continue;
            }
            match end {
                End::Reconnect => continue,
                End::Refused if !host.can_renew() => {}
                // Ended for a token that has been renewed since: open it with the new one.
                End::Unauthenticated | End::Refused
                    if token.try_get_untracked().is_some_and(|t| t != used) =>
                {
                    continue
                }
                End::Unauthenticated | End::Refused => match host.renew().await {
                    // A new token: open the stream with it at once. The same one again (the
                    // host's cache thinks it fresh) backs off, so a refused token is not
                    // sent again at round-trip speed, nor getToken called as fast.
                    Ok(()) if token.try_get_untracked().is_some_and(|t| t != used) => continue,
                    Ok(()) => {}
                    Err(e) => on_unauthenticated(e),
                },
                End::Failed => {}
            }
            back_off(&mut failures).await;
        }
    });
    handle
}

/// Waits longer for each failure in a row: 2 s, 4 s, … up to [`MAX_BACKOFF`].
async fn back_off(failures: &mut u32) {
    *failures = failures.saturating_add(1);
    let wait = Duration::from_secs(1)
        .saturating_mul(1 << (*failures).min(6))
        .min(MAX_BACKOFF);
    gloo_timers::future::sleep(wait).await;
}

/// One stream, read until it ends (or is aborted: the page was hidden, the filter changed).
async fn read(
    host: &Host,
    view: &View,
    filter: Filter,
    token: &str,
    abort: &web_sys::AbortController,
    feed: &RefCell<Option<JsValue>>,
    on_page: &mut dyn FnMut(RecentPage),
) -> End {
    let end = read_until_end(host, view, filter, token, abort, feed, on_page)
        .await
        .unwrap_or(End::Failed);
    feed.take();
    // However it ended, the request goes: a body left unread kept its connection (and, shared,
    // its place in the browser's one stream) until collected.
    abort.abort();
    end
}

async fn read_until_end(
    host: &Host,
    view: &View,
    filter: Filter,
    token: &str,
    abort: &web_sys::AbortController,
    feed: &RefCell<Option<JsValue>>,
    on_page: &mut dyn FnMut(RecentPage),
) -> Result<End, JsValue> {
    let live = super::bell::share_fn("live").ok_or("share.js is not installed")?;
    // The view as data: share.js opens the stream of it, or joins the browser's shared one.
    let asked = js_sys::Object::new();
    for (k, v) in [
        ("server", JsValue::from_str(&host.endpoint.server)),
        ("ws", JsValue::from_str(&view.ws)),
        ("filter", JsValue::from_str(filter.as_str())),
        ("cap", JsValue::from(view.cap)),
        (
            "authorization",
            JsValue::from_str(&format!("Bearer {token}")),
        ),
        ("signal", abort.signal().into()),
    ] {
        js_sys::Reflect::set(&asked, &k.into(), &v)?;
    }
    let opened = JsFuture::from(
        live.call1(&JsValue::NULL, &asked)?
            .dyn_into::<js_sys::Promise>()?,
    )
    .await?;
    let get = |o: &JsValue, k: &str| js_sys::Reflect::get(o, &k.into());
    match get(&opened, "status")?.as_f64() {
        Some(200.0) => {}
        Some(401.0) => return Ok(End::Refused),
        // Another refusal may pass (a server being upgraded): back off and retry.
        _ => return Ok(End::Failed),
    }
    let reader: web_sys::ReadableStreamDefaultReader = get(&opened, "events")?
        .dyn_into::<web_sys::ReadableStream>()?
        .get_reader()
        .dyn_into()?;
    *feed.borrow_mut() = Some(opened);
    // Its token's end: as the server ends a stream at `exp`, the widget ends its read of a
    // shared one, whose holder's token may last longer. Beyond a timer's range, never.
    let left = host.expires_in(token).filter(|d| d.as_millis() < 1 << 31);
    let expired = async move {
        match left {
            Some(left) => gloo_timers::future::sleep(left).await,
            None => futures::future::pending().await,
        }
    };
    futures::pin_mut!(expired);
    loop {
        let next = futures::future::select(
            JsFuture::from(reader.read()),
            gloo_timers::future::sleep(SILENCE),
        );
        let read = match futures::future::select(next, &mut expired).await {
            Either::Left((Either::Left((read, _)), _)) => read?,
            Either::Left((Either::Right(_), _)) => return Ok(End::Failed),
            Either::Right(_) => return Ok(End::Unauthenticated),
        };
        if get(&read, "done")?.is_truthy() {
            return Ok(End::Failed); // cut short: no closing event
        }
        let event = get(&read, "value")?;
        // A keep-alive has no name.
        let Some(name) = get(&event, "name")?.as_string() else {
            continue;
        };
        match LiveEvent::from_wire(name.as_bytes()) {
            Some(LiveEvent::Page) => {
                match crate::decode::page(&get(&event, "data")?, filter, view.cap) {
                    Some(page) => on_page(page),
                    // A page this widget cannot read (a server of another version): poll, which
                    // shows the error, rather than keep showing cards the stream has moved past.
                    None => return Ok(End::Failed),
                }
            }
            Some(LiveEvent::Unauthenticated) => return Ok(End::Unauthenticated),
            // The store is not answering: poll (which says so) until the stream is back.
            Some(LiveEvent::Unavailable) => return Ok(End::Failed),
            Some(LiveEvent::Reconnect) => return Ok(End::Reconnect),
            None => {}
        }
    }
}
