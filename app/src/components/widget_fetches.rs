//! The widget's calls to its server: fetching the first page, dismissing, "Show older". No
//! `Action` or `LocalResource` for them: their machinery costs the widget kilobytes.

use super::widget_state::State;
use crate::components::stream::Handle;
use crate::contract::ApiError;
use crate::host::Host;
use leptos::prelude::*;
use std::rc::Rc;

/// Every failed call is shown and told to the host as `pickup:error`.
pub fn report(host: &Host, state: State, e: ApiError) {
    host.error(&e);
    state.error.set(Some(e));
}

/// What a call needs: the workspace and the host (server, token, renewal), with the state its
/// answers go to. Stored, so that what makes calls can be copied into the view.
#[derive(Clone, Copy)]
pub struct Calls {
    stored: StoredValue<(String, Rc<Host>), LocalStorage>,
    state: State,
    cap: u32,
}

impl Calls {
    pub fn new(ws: String, host: Rc<Host>, state: State, cap: u32) -> Self {
        let stored = StoredValue::new_local((ws, host));
        Self { stored, state, cap }
    }

    /// Fetch the first page now, and whenever the filter changes or `tick` is bumped; a new
    /// filter retunes the `stream`. Each page goes to [`State::accept`], with `new_items`.
    pub fn fetch_on_tick(self, stream: Handle, new_items: String) {
        let (state, cap) = (self.state, self.cap);
        // Each fetch is numbered (sent, handled). An answer older than one handled already is
        // dropped, as is one for a filter the viewer has left.
        let fetches = StoredValue::new((0u64, 0u64));
        Effect::new(move |_| {
            let f = state.filter.get();
            state.tick.track();
            // A new filter ends the stream of the old one.
            stream.retune(Some(f));
            let (Some((ws, host)), Some(n)) = (
                self.stored.try_get_value(),
                fetches.try_update_value(|(sent, _)| {
                    *sent += 1;
                    *sent
                }),
            ) else {
                return;
            };
            let sent_after = state.stream_pages.get_value();
            let new_items = new_items.clone();
            leptos::task::spawn_local(async move {
                let page = host.call(|| host.endpoint.recent(&ws, f, cap, None)).await;
                if state.filter.try_get_untracked() != Some(f) {
                    return; // the viewer switched filters, or the widget is gone
                }
                let newest = fetches.try_update_value(|(_, handled)| {
                    let newest = n > *handled;
                    if newest {
                        *handled = n;
                    }
                    newest
                });
                if newest != Some(true) {
                    return;
                }
                match page {
                    Ok(page) if sent_after == state.stream_pages.get_value() => {
                        state.accept(page, &new_items)
                    }
                    // Not shown, but the fetch worked: polling need not back off.
                    Ok(_) => state.failures.set(0),
                    Err(e) => {
                        report(&host, state, e);
                        state.failures.update(|n| *n = n.saturating_add(1));
                    }
                }
            });
        });
    }

    /// Dismiss item `id` on the server. Made by the widget, not the card: the card is gone
    /// before the call is made.
    pub fn dismiss(self, id: String) {
        let Some((ws, host)) = self.stored.try_get_value() else {
            return;
        };
        let state = self.state;
        leptos::task::spawn_local(async move {
            if let Err(e) = host.call(|| host.endpoint.dismiss(&ws, &id)).await {
                report(&host, state, e);
            }
        });
    }

    /// Pin (`pinned`) or unpin item `id` for this viewer, then fetch the page that says so (a
    /// live stream brings it too). A refusal (the most pins already) is told to the host and
    /// announced; the cards stay as they are.
    pub fn pin(self, id: String, pinned: bool) {
        let Some((ws, host)) = self.stored.try_get_value() else {
            return;
        };
        let state = self.state;
        leptos::task::spawn_local(async move {
            match host.call(|| host.endpoint.pin(&ws, &id, pinned)).await {
                Ok(()) => {
                    let button = super::widget_state::on_card(&id, ".pickup-pin");
                    state.after_page.set_value(Some(button));
                    state.bump();
                }
                Err(e) => {
                    host.error(&e);
                    state.announcement.try_set(e.message);
                }
            }
        });
    }

    /// "Show older": the page of cards before `before`, for [`State::accept_older`]. Scoped to
    /// `owner`, the widget's: a page that comes after the widget is gone is dropped.
    pub fn show_older(self, owner: &Owner, before: String) {
        let Some((ws, host)) = self.stored.try_get_value() else {
            return;
        };
        let (state, cap) = (self.state, self.cap);
        let f = state.filter.get_untracked();
        state.older_pending.set(true);
        owner.with(|| {
            leptos::task::spawn_local_scoped(async move {
                let res = host
                    .call(|| host.endpoint.recent(&ws, f, cap, Some(&before)))
                    .await;
                // Not for a filter the viewer switched away from meanwhile.
                if state.older_pending.try_set(false).is_some() || f != state.filter.get_untracked()
                {
                    return;
                }
                match res {
                    Ok(page) => state.accept_older(page),
                    Err(e) => {
                        host.error(&e);
                        state.older_failed.set(true);
                    }
                }
            })
        });
    }
}
