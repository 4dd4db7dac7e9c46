//! Keeping a widget current: the refresh timer with back-off, refreshing when the page is shown
//! again, and relative times that tick. Each loop ends when its widget's signals are gone.

use crate::contract::RecentPage;
use leptos::prelude::*;
use leptos::task::spawn_local;
use std::time::Duration;
use wasm_bindgen::prelude::*;

/// The longest wait between two tries while the server keeps failing.
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// The wait before the next refresh: the period, doubled for each failure in a row, capped.
pub fn next_wait(period: Duration, failures: u32) -> Duration {
    period
        .saturating_mul(1 << failures.min(10))
        .min(MAX_BACKOFF.max(period))
}

/// Every period (longer while failing), fetch again, unless the page is hidden.
pub fn refresh_loop(period: Duration, failures: RwSignal<u32>, bump: impl Fn() + 'static) {
    spawn_local(async move {
        loop {
            let Some(n) = failures.try_get_untracked() else {
                return;
            };
            gloo_timers::future::sleep(next_wait(period, n)).await;
            if failures.try_get_untracked().is_none() {
                return;
            }
            if !document().hidden() {
                bump();
            }
        }
    });
}

/// Call `shown(true)` when the page is shown again (fetch at once: hidden pages skip refreshes)
/// and `shown(false)` when it is hidden (close the stream). Returns what removes the listener.
pub fn on_visibility(shown: impl Fn(bool) + 'static) -> impl FnOnce() {
    listen(&document(), "visibilitychange", move || {
        shown(!document().hidden())
    })
}

/// Call `f` on each `event` at `target`; returns what removes the listener.
pub fn listen(
    target: &web_sys::EventTarget,
    event: &'static str,
    f: impl Fn() + 'static,
) -> impl FnOnce() {
    let f = Closure::<dyn Fn()>::new(f);
    let _ = target.add_event_listener_with_callback(event, f.as_ref().unchecked_ref());
    let target = target.clone();
    move || {
        let _ = target.remove_event_listener_with_callback(event, f.as_ref().unchecked_ref());
    }
}

pub fn keep_time_current(now: RwSignal<f64>) {
    spawn_local(async move {
        loop {
            gloo_timers::future::sleep(Duration::from_secs(30)).await;
            if now.try_set(js_sys::Date::now()).is_some() {
                return;
            }
        }
    });
}

/// Titles of cards that were not on the previous page (none on the first load: that is not news).
pub fn new_titles(before: Option<&RecentPage>, after: &RecentPage) -> Vec<String> {
    let Some(before) = before else {
        return Vec::new();
    };
    after
        .cards
        .iter()
        .filter(|c| !before.cards.iter().any(|b| b.id == c.id))
        .map(|c| c.title.clone())
        .collect()
}
