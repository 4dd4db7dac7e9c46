//! The widget: a header, then a list of cards. Each mounted widget owns its own signals, its
//! own server and its own token (its [`Host`]), so several can live on one page.

use super::card::CardView;
use super::frame::{Frame, PartialNote, ShowOlder};
use super::header::Header;
use super::live;
use super::states::{EmptyState, ErrorState, Skeleton};
use super::stream::{self, Liveness};
use crate::contract::{ApiError, Card, ErrorCode, Filter, RecentPage};
use crate::host::Host;
use crate::labels::{fill, Labels};
use crate::older;
use leptos::prelude::*;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use wasm_bindgen::JsValue;

/// Everything a host page tells a widget (from `data-pickup-*` attributes or `mount` options).
/// Its server and token are the [`Host`]'s.
#[derive(Clone)]
pub struct WidgetConfig {
    pub ws: String,
    pub cap: u32,
    pub refresh: Duration,
    pub labels: Arc<Labels>,
    /// Relative times in the viewer's locale, or the one the host set.
    pub times: js_sys::Intl::RelativeTimeFormat,
    /// Unique per widget on the page: the cards' element ids start with it.
    pub id_prefix: String,
    /// Whose items the widget shows first; the viewer's toggle changes it.
    pub filter: Filter,
}

/// What a widget's body shows.
#[derive(Clone, PartialEq)]
enum Shown {
    Loading,
    Forbidden,
    Unauthenticated,
    Failed(ApiError),
    Empty,
    List,
}

#[component]
pub fn Widget(config: WidgetConfig, host: Rc<Host>) -> impl IntoView {
    let labels = config.labels.clone();
    let times = StoredValue::new_local(config.times.clone());
    let filter = RwSignal::new(config.filter);
    // Bumped to fetch now: by the timer, the refresh button, the page becoming visible.
    let tick = RwSignal::new(0u64);
    let failures = RwSignal::new(0u32);
    let last_good = RwSignal::new(None::<RecentPage>);
    let error = RwSignal::new(None::<ApiError>);
    let now = RwSignal::new(js_sys::Date::now());
    // Hidden at once when the viewer dismisses, before the server confirms. A list, not a hash
    // set: a viewer dismisses a few cards, and std's hashing costs the widget kilobytes.
    let dismissed = RwSignal::new(Vec::<String>::new());
    let announcement = RwSignal::new(String::new());
    // "Show older": the cards of the older pages asked for, below the first page, which keeps
    // refreshing (see `older`). `older_more` is `None` until the viewer asks, then the `more` of
    // the last older page.
    let older = RwSignal::new(Vec::<Card>::new());
    let older_more = RwSignal::new(None::<bool>);
    let older_failed = RwSignal::new(false);
    let reset_older = move || {
        older.set(Vec::new());
        older_more.set(None);
        older_failed.set(false);
    };
    Effect::new(move |_| {
        filter.track();
        reset_older();
    });

    // The home page's drawing of the first page stands in for the widget until it has drawn
    // the first page, or an error, itself. Then the effect reads no signal, and is done.
    let drawn = host.clone();
    Effect::new(move |ended: Option<bool>| {
        if ended == Some(true) {
            return true;
        }
        let ready = last_good.with(Option::is_some) || error.with(Option::is_some);
        if ready {
            drawn.end_drawing();
        }
        ready
    });

    let cap = config.cap;
    // Every failed call is shown and told to the host as `pickup:error`.
    let report = {
        let host = host.clone();
        move |e: ApiError| {
            host.error(&e);
            error.set(Some(e));
        }
    };
    // What a call needs: the workspace, the host (server, token, renewal) and where a failure
    // goes. Stored, so that what makes calls can be copied into the view.
    let calls = StoredValue::new_local((config.ws.clone(), host.clone(), report.clone()));
    let new_items = labels.new_items.clone();
    // A page from a fetch or from the stream.
    let accept = move |page: RecentPage| {
        now.set(js_sys::Date::now());
        let fresh = live::new_titles(last_good.get_untracked().as_ref(), &page);
        if !fresh.is_empty() {
            announcement.set(fill(&new_items, &fresh.join(", ")));
        }
        if !page.more {
            // Nothing lies beyond the first page any more.
            reset_older();
        } else if older_more.get_untracked().is_some() {
            let before = last_good
                .get_untracked()
                .map(|p| p.cards)
                .unwrap_or_default();
            older.update(|o| *o = older::refreshed(std::mem::take(o), &before, &page.cards));
        }
        last_good.set(Some(page));
        error.set(None);
        failures.set(0);
    };
    // Live when the server streams; polling whenever the stream is not up.
    let liveness = RwSignal::new(Liveness::Connecting);
    // Pages the stream has given. A fetch answered after a stream page that came while it was
    // on its way may be older than that page (its snapshot can predate it), so it is dropped:
    // the stream brings every change after its own page anyway.
    let stream_pages = StoredValue::new(0u64);
    let (stream_ws, server) = (config.ws.clone(), host.endpoint.server.clone());
    let from_stream = {
        let accept = accept.clone();
        move |page: RecentPage| {
            stream_pages.update_value(|n| *n += 1);
            accept(page);
        }
    };
    let stream = stream::follow(
        host.clone(),
        move |f| stream::url(&server, &stream_ws, f, cap),
        filter,
        liveness,
        from_stream,
        report.clone(),
    );
    let retune = stream.clone();
    // Each fetch is numbered (sent, handled). An answer older than one handled already is
    // dropped, as is one for a filter the viewer has left. Not a `LocalResource`: its machinery
    // cost the widget kilobytes.
    let fetches = StoredValue::new((0u64, 0u64));
    Effect::new(move |_| {
        let f = filter.get();
        tick.track();
        // A new filter ends the stream of the old one.
        retune.retune(Some(f));
        let (Some((ws, host, report)), Some(n)) = (
            calls.try_get_value(),
            fetches.try_update_value(|(sent, _)| {
                *sent += 1;
                *sent
            }),
        ) else {
            return;
        };
        let sent_after = stream_pages.get_value();
        let accept = accept.clone();
        leptos::task::spawn_local(async move {
            let page = host.call(|| host.endpoint.recent(&ws, f, cap, None)).await;
            if filter.try_get_untracked() != Some(f) {
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
                Ok(page) if sent_after == stream_pages.get_value() => accept(page),
                // Not shown, but the fetch worked: polling need not back off.
                Ok(_) => failures.set(0),
                Err(e) => {
                    report(e);
                    failures.update(|n| *n = n.saturating_add(1));
                }
            }
        });
    });
    let bump = move || {
        tick.try_update(|t| *t += 1);
    };
    let poll = move || {
        if liveness.get_untracked() != Liveness::Live {
            bump();
        }
    };
    live::refresh_loop(config.refresh, failures, poll);
    host.set_refresher(bump);
    let hide = stream.clone();
    let stop_listening = live::on_visibility(move |shown| {
        if shown {
            bump();
        } else {
            // Hidden: close the stream; it reopens, and catches up, when the page is shown.
            hide.retune(None);
        }
    });
    live::keep_time_current(now);
    // A new token (renewed, or a new `data-pickup-token`): schedule its renewal and fetch with
    // it. A stream reopens with it when the server ends the old token's stream at its expiry.
    let (token, renewals) = (host.endpoint.token, host.clone());
    Effect::new(move |first: Option<()>| {
        token.track();
        renewals.schedule_renewal();
        if first.is_some() {
            bump();
        }
    });
    let stopped = stream.clone();
    host.on_unmount(move || {
        stop_listening();
        stopped.retune(None);
    });

    // Made by the widget, not the card: the card is gone before the call is made. No `Action`
    // for this or for "Show older": its machinery costs the widget kilobytes.
    let dismiss_now = move |id: String| {
        let Some((ws, host, report)) = calls.try_get_value() else {
            return;
        };
        leptos::task::spawn_local(async move {
            if let Err(e) = host.call(|| host.endpoint.dismiss(&ws, &id)).await {
                report(e);
            }
        });
    };
    // Scoped to the widget's owner: a page that comes after the widget is gone is dropped.
    let owner = Owner::current().expect("a widget has an owner");
    // The cards shown: the first page, then the older pages asked for, less the dismissed.
    let visible = Memo::new(move |_| {
        let hidden = dismissed.get();
        let first = last_good.with(|p| p.as_ref().map(|p| p.cards.clone()).unwrap_or_default());
        older.with(|older| {
            first
                .into_iter()
                .chain(older.iter().cloned())
                .filter(|c| !hidden.contains(&c.id))
                .collect::<Vec<_>>()
        })
    });
    // The card that takes focus once it is drawn (the first older card after "Show older").
    let focus_next = RwSignal::new(None::<String>);
    let older_pending = RwSignal::new(false);
    let show_older_now = move |before: String| {
        let Some((ws, host, _)) = calls.try_get_value() else {
            return;
        };
        let f = filter.get_untracked();
        older_pending.set(true);
        owner.with(|| {
            leptos::task::spawn_local_scoped(async move {
                let res = host
                    .call(|| host.endpoint.recent(&ws, f, cap, Some(&before)))
                    .await;
                // Not for a filter the viewer switched away from meanwhile.
                if older_pending.try_set(false).is_some() || f != filter.get_untracked() {
                    return;
                }
                match res {
                    Ok(page) => {
                        let first = last_good
                            .get_untracked()
                            .map(|p| p.cards)
                            .unwrap_or_default();
                        // Focus goes to the first of the older cards, once its card is drawn.
                        let shown = visible.get_untracked();
                        let first_new = page
                            .cards
                            .iter()
                            .find(|c| !shown.iter().any(|s| s.id == c.id))
                            .map(|c| c.id.clone());
                        older.update(|o| {
                            *o = older::below(
                                &first,
                                std::mem::take(o).into_iter().chain(page.cards),
                            )
                        });
                        older_more.set(Some(page.more));
                        focus_next.set(first_new);
                        older_failed.set(false);
                    }
                    Err(e) => {
                        host.error(&e);
                        older_failed.set(true);
                    }
                }
            })
        });
    };
    let stored_host = StoredValue::new_local(host.clone());
    let id_prefix = config.id_prefix.clone();
    // What the body shows. Only a change of this redraws it; within the list, each card is
    // its item's (keyed by id), so a page that arrives changes cards in place.
    let shown = Memo::new(
        move |_| match (last_good.with(Option::is_some), error.get()) {
            (false, None) => Shown::Loading,
            (false, Some(e)) if e.error == ErrorCode::Forbidden => Shown::Forbidden,
            (_, Some(e)) if e.error == ErrorCode::Unauthenticated => Shown::Unauthenticated,
            (false, Some(e)) => Shown::Failed(e),
            (true, stale) if stale.is_none() && visible.with(Vec::is_empty) => Shown::Empty,
            (true, _) => Shown::List,
        },
    );
    let body = move || {
        let l = labels.clone();
        match shown.get() {
            Shown::Loading => view! { <Skeleton labels=l/> }.into_any(),
            Shown::Forbidden => view! {
                <p class="pickup-state pickup-forbidden" part="error" role="alert">{l.forbidden.clone()}</p>
            }
            .into_any(),
            Shown::Unauthenticated => view! {
                <p class="pickup-state pickup-unauthenticated" part="error" role="alert">{l.unauthenticated.clone()}</p>
            }
            .into_any(),
            Shown::Failed(e) => view! { <ErrorState error=e labels=l retry=bump/> }.into_any(),
            Shown::Empty => view! { <EmptyState labels=l/> }.into_any(),
            Shown::List => {
                // The older pages continue after the last card of all, hidden ones included.
                let cursor = move || {
                    let last_first = last_good.with(|p| p.as_ref().and_then(|p| p.cards.last().map(|c| c.id.clone())));
                    older.with(|o| o.last().map(|c| c.id.clone())).or(last_first)
                };
                let more = move || older_more.get().unwrap_or_else(|| last_good.with(|p| p.as_ref().is_some_and(|p| p.more)));
                let (stale, older_note) = (l.stale.clone(), l.older_failed.clone());
                let (older_labels, partial_labels) = (l.clone(), l.clone());
                let show_older_now = show_older_now.clone();
                let (id_prefix, list_label, card_labels) = (id_prefix.clone(), l.list.clone(), l.clone());
                let card = move |card: Card| {
                    let (id, key, url) = (card.id.clone(), card.key.clone(), card.url.clone());
                    let (opened, dismissed_id, current_id) = (id.clone(), id.clone(), id.clone());
                    let current = Signal::derive(move || {
                        visible
                            .with(|v| v.iter().find(|c| c.id == current_id).cloned())
                            .unwrap_or_else(|| card.clone())
                    });
                    view! {
                        <CardView
                            id=id
                            card=current
                            now=now.into()
                            labels=card_labels.clone()
                            times=Some(times)
                            id_prefix=id_prefix.clone()
                            focus=focus_next
                            on_open=move || {
                                let detail = [
                                    ("id", JsValue::from_str(&opened)),
                                    ("key", JsValue::from_str(&key)),
                                    ("url", url.as_deref().map_or(JsValue::NULL, JsValue::from_str)),
                                ];
                                stored_host.try_with_value(|h| h.emit("open", &detail)).unwrap_or(true)
                            }
                            on_dismiss=move || {
                                // Hidden at once; if the server refuses, a refresh brings it back.
                                let id = dismissed_id.clone();
                                dismiss_now(id.clone());
                                dismissed.update(|d| d.push(id.clone()));
                                stored_host.try_with_value(|h| h.emit("dismiss", &[("id", JsValue::from_str(&id))]));
                            }
                        />
                    }
                };
                view! {
                    {move || (error.with(Option::is_some)).then(|| view! {
                        <p class="pickup-note pickup-stale" role="status">{stale.clone()}</p>
                    })}
                    <ul class="pickup-list" aria-label=list_label>
                        <For each=move || visible.get() key=|c| c.id.clone() children=card/>
                    </ul>
                    {move || older_failed.get().then(|| view! { <p class="pickup-note" role="status">{older_note.clone()}</p> })}
                    {move || cursor().filter(|_| more()).map(|before| {
                        let show_older = show_older_now.clone();
                        view! {
                            <ShowOlder labels=older_labels.clone() pending=older_pending.into() on_click=move || show_older(before.clone())/>
                        }
                    })}
                    {move || last_good.with(|p| p.as_ref().is_some_and(|p| p.partial)).then(|| view! { <PartialNote labels=partial_labels.clone()/> })}
                }
                .into_any()
            }
        }
    };

    let live = Signal::derive(move || match liveness.get() {
        Liveness::Live => "live",
        Liveness::Polling => "polling",
        Liveness::Connecting => "connecting",
    });
    view! {
        <Frame labels=config.labels.clone() live=live announcement=Signal::from(announcement)>
            <Header filter=filter labels=config.labels.clone() on_refresh=bump/>
            <div class="pickup-body">{body}</div>
        </Frame>
    }
}
