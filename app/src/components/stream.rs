//! The live stream: the server's pages as they change (`GET /api/v1/workspaces/{ws}/live`),
//! opened through the loader's share.js (one stream per browser, public/share.js), which reads
//! it with `fetch` so the token travels in `Authorization`, never in a URL (an `EventSource`
//! cannot send headers), parses its server-sent events, and hands the widget each event as data:
//! a page as the browser's JSON.parse made it, a keep-alive as an event without a name.
//!
//! The widget keeps polling whenever the stream is not up: blocked, failing, hidden, or an
//! old server that has no stream.

use crate::contract::names::route;
use crate::contract::{ApiError, Filter, LiveEvent, RecentPage};
use crate::host::Host;
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

/// The widget's stream: which filter it was opened for, and how to end it.
#[derive(Clone, Default)]
pub struct Handle(Rc<RefCell<Option<(Filter, web_sys::AbortController)>>>);

impl Handle {
    /// End the open stream if it was opened for a filter other than `filter` (the loop opens
    /// one for `filter` at once); with `None`, end it whatever it was for.
    pub fn retune(&self, filter: Option<Filter>) {
        if let Some((f, abort)) = self.0.borrow().as_ref() {
            if filter != Some(*f) {
                abort.abort();
            }
        }
    }
}

/// Keep a stream open while the widget lives and its page is visible (the widget ends it with
/// [`Handle::retune`] when the page is hidden); reconnect with back-off, and at once when
/// `retune` ends it for a new filter or the server ends it for a token that has since been
/// renewed. Each page goes to `on_page`. A refused token is renewed through the host's
/// `getToken`; if that fails, the error goes to `on_unauthenticated` and the loop backs off
/// (polling, with whatever token the host gives meanwhile, goes on).
pub fn follow(
    host: Rc<Host>,
    url: impl Fn(Filter) -> String + 'static,
    filter: RwSignal<Filter>,
    live: RwSignal<Liveness>,
    on_page: impl Fn(RecentPage) + Clone + 'static,
    on_unauthenticated: impl Fn(ApiError) + 'static,
) -> Handle {
    let handle = Handle::default();
    let current = handle.0.clone();
    let token = host.endpoint.token;
    spawn_local(async move {
        let mut failures = 0u32;
        loop {
            if dozing() {
                // Closed while hidden; the first page after reopening catches up.
                wait_until_shown().await;
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
            *current.borrow_mut() = Some((f, abort.clone()));
            let on_page = on_page.clone();
            let got_a_page = std::cell::Cell::new(false);
            let end = read(&url(f), &used, &abort, &mut |page| {
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
            if filter.try_get_untracked().is_some_and(|now| now != f) || dozing() {
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

/// The stream's URL for a widget: its server (empty: this page's), workspace, filter and cap.
pub fn url(server: &str, ws: &str, filter: Filter, cap: u32) -> String {
    let ws = String::from(js_sys::encode_uri_component(ws));
    let path = route::fill(route::LIVE, &ws, None);
    format!("{server}{path}?filter={}&cap={cap}", filter.as_str())
}

/// One stream, read until it ends (or is aborted: the page was hidden, the filter changed).
async fn read(
    url: &str,
    token: &str,
    abort: &web_sys::AbortController,
    on_page: &mut dyn FnMut(RecentPage),
) -> End {
    let end = read_until_end(url, &format!("Bearer {token}"), abort, on_page)
        .await
        .unwrap_or(End::Failed);
    // However it ended, the request goes: a body left unread kept its connection (and, shared,
    // its place in the browser's one stream) until collected.
    abort.abort();
    end
}

async fn read_until_end(
    url: &str,
    authorization: &str,
    abort: &web_sys::AbortController,
    on_page: &mut dyn FnMut(RecentPage),
) -> Result<End, JsValue> {
    let init = web_sys::RequestInit::new();
    let headers = web_sys::Headers::new()?;
    headers.set("Authorization", authorization)?;
    init.set_headers(&headers);
    init.set_signal(Some(&abort.signal()));
    let feed = JsFuture::from(open_live(url, &init)?).await?;
    let get = |o: &JsValue, k: &str| js_sys::Reflect::get(o, &k.into());
    match get(&feed, "status")?.as_f64() {
        Some(200.0) => {}
        Some(401.0) => return Ok(End::Refused),
        // Another refusal may pass (a server being upgraded): back off and retry.
        _ => return Ok(End::Failed),
    }
    let next: js_sys::Function = get(&feed, "next")?.dyn_into()?;
    loop {
        let read = futures::future::select(
            JsFuture::from(next.call0(&feed)?.dyn_into::<js_sys::Promise>()?),
            gloo_timers::future::sleep(SILENCE),
        );
        let event = match read.await {
            futures::future::Either::Left((event, _)) => event?,
            futures::future::Either::Right(_) => return Ok(End::Failed),
        };
        if event.is_null() {
            return Ok(End::Failed); // cut short: no closing event
        }
        // A keep-alive has no name.
        let Some(name) = get(&event, "name")?.as_string() else {
            continue;
        };
        match LiveEvent::from_wire(name.as_bytes()) {
            Some(LiveEvent::Page) => match crate::decode::page(&get(&event, "data")?) {
                Some(page) => on_page(page),
                // A page this widget cannot read (a server of another version): poll, which
                // shows the error, rather than keep showing cards the stream has moved past.
                None => return Ok(End::Failed),
            },
            Some(LiveEvent::Unauthenticated) => return Ok(End::Unauthenticated),
            // The store is not answering: poll (which says so) until the stream is back.
            Some(LiveEvent::Unavailable) => return Ok(End::Failed),
            Some(LiveEvent::Reconnect) => return Ok(End::Reconnect),
            None => {}
        }
    }
}

/// The stream, as share.js's feed of its events. Without share.js (a page that loaded the glue
/// itself, not through a loader) there is no stream, and the widget polls.
fn open_live(url: &str, init: &web_sys::RequestInit) -> Result<js_sys::Promise, JsValue> {
    let live = super::bell::share_fn("live").ok_or("share.js is not installed")?;
    live.call2(&JsValue::NULL, &url.into(), init)?.dyn_into()
}

/// Whether the stream rests: the page is hidden and the bell is off (with it on, a hidden tab
/// keeps its stream, so that the viewer hears of their items ending).
pub fn dozing() -> bool {
    document().hidden() && super::bell::bell() != super::bell::BellState::On
}

/// Resolves once the page is visible, or the bell on (checked twice a second: a hidden page
/// has time).
async fn wait_until_shown() {
    while dozing() {
        gloo_timers::future::sleep(Duration::from_millis(500)).await;
    }
}
