//! The widget: a header, then a list of cards. Each mounted widget owns its own signals and its
//! own token, so several can live on one page.

mod card;
mod header;
mod live;
mod states;
mod stream;

use crate::api::{dismiss, recent, BearerToken};
use crate::error::{ApiError, ErrorCode};
use crate::model::{Card, Filter, RecentPage};
use crate::older;
use card::CardView;
use header::Header;
use leptos::prelude::*;
use states::{EmptyState, ErrorState, Skeleton};
use std::collections::HashSet;
use std::time::Duration;
use stream::Liveness;

/// Everything a host page tells a widget (from `data-pickup-*` attributes or `mount` options).
#[derive(Clone, Debug, PartialEq)]
pub struct WidgetConfig {
    pub ws: String,
    pub token: String,
    pub cap: u32,
    pub refresh: Duration,
}

#[component]
pub fn Widget(config: WidgetConfig) -> impl IntoView {
    provide_context(BearerToken(config.token.clone()));
    let filter = RwSignal::new(Filter::All);
    // Bumped to fetch now: by the timer, the refresh button, the page becoming visible.
    let tick = RwSignal::new(0u64);
    let failures = RwSignal::new(0u32);
    let last_good = RwSignal::new(None::<RecentPage>);
    let error = RwSignal::new(None::<ApiError>);
    let now = RwSignal::new(js_sys::Date::now());
    // Hidden at once when the viewer dismisses, before the server confirms.
    let dismissed = RwSignal::new(HashSet::<String>::new());
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

    let (ws, cap) = (config.ws.clone(), config.cap);
    // A page from a fetch or from the stream.
    let accept = move |page: RecentPage| {
        now.set(js_sys::Date::now());
        let fresh = live::new_titles(last_good.get_untracked().as_ref(), &page);
        if !fresh.is_empty() {
            announcement.set(format!("New: {}", fresh.join(", ")));
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
    let stream_ws = config.ws.clone();
    let stream = stream::follow(
        move |f| stream::url(&stream_ws, f, cap),
        &config.token,
        filter,
        liveness,
        accept,
        move || {
            error.set(Some(ApiError::new(
                ErrorCode::Unauthenticated,
                "the token expired",
            )))
        },
    );
    let retune = stream.clone();
    let fetched = LocalResource::new(move || {
        let (ws, f) = (ws.clone(), filter.get());
        // A new filter ends the stream of the old one.
        retune.retune(Some(f));
        tick.track();
        async move { recent(ws, f, Some(cap), None).await }
    });
    Effect::new(move |_| match fetched.get() {
        Some(Ok(page)) => accept(page),
        Some(Err(e)) => {
            error.set(Some(e));
            failures.update(|n| *n = n.saturating_add(1));
        }
        None => {}
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
    live::on_visibility(move |shown| {
        if shown {
            bump();
        } else {
            // Hidden: close the stream; it reopens, and catches up, when the page is shown.
            stream.retune(None);
        }
    });
    live::keep_time_current(now);

    // Owned by the widget, not the card: the card is gone before the call is made, and the call
    // needs the widget's context (its token).
    let ws = config.ws.clone();
    let dismiss_action = Action::new_local(move |id: &String| {
        let (ws, id) = (ws.clone(), id.clone());
        async move { dismiss(ws, id).await }
    });
    // Run under the widget's owner, so the call has the widget's context (its token). No
    // `Action`: its machinery costs the widget kilobytes.
    let owner = Owner::current().expect("a widget has an owner");
    let older_pending = RwSignal::new(false);
    let (ws, owner) = (config.ws.clone(), owner);
    let show_older_now = move |before: String| {
        let (ws, f) = (ws.clone(), filter.get_untracked());
        older_pending.set(true);
        owner.with(|| {
            leptos::task::spawn_local_scoped(async move {
                let res = recent(ws, f, Some(cap), Some(before)).await;
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
                        older.update(|o| {
                            *o = older::below(
                                &first,
                                std::mem::take(o).into_iter().chain(page.cards),
                            )
                        });
                        older_more.set(Some(page.more));
                        older_failed.set(false);
                    }
                    Err(_) => older_failed.set(true),
                }
            })
        });
    };
    let body = move || {
        match (last_good.get(), error.get()) {
            (None, None) => Skeleton().into_any(),
            (None, Some(e)) if e.error == ErrorCode::Forbidden => view! {
                <p class="pickup-state pickup-forbidden" role="alert">
                    "You are not a member of this workspace, so its items are not shown. Ask one of its members to invite you."
                </p>
            }
            .into_any(),
            (_, Some(e)) if e.error == ErrorCode::Unauthenticated => view! {
                <p class="pickup-state pickup-unauthenticated" role="alert">
                    "Your sign-in for this widget is missing or has expired. Reload the page to sign in again."
                </p>
            }
            .into_any(),
            (None, Some(e)) => view! { <ErrorState error=e retry=bump/> }.into_any(),
            (Some(page), stale) => {
                let hidden = dismissed.get();
                let older = older.get();
                // The older pages continue after the last card of all, hidden ones included.
                let cursor = older.last().or(page.cards.last()).map(|c| c.id.clone());
                let show_older = older_more.get().unwrap_or(page.more);
                let cards: Vec<_> = page.cards.into_iter().chain(older).filter(|c| !hidden.contains(&c.id)).collect();
                if cards.is_empty() && stale.is_none() {
                    return EmptyState().into_any();
                }
                view! {
                    {stale.map(|_| view! {
                        <p class="pickup-note pickup-stale" role="status">"Couldn't refresh; showing the last cards. Retrying…"</p>
                    })}
                    <ul class="pickup-list" aria-label="Recent items">
                        {cards.into_iter().map(|card| {
                            let id = card.id.clone();
                            view! {
                                <CardView
                                    card=card
                                    now=now.into()
                                    on_dismiss=move || {
                                        // Hidden at once; if the server refuses, a refresh brings it back.
                                        dismiss_action.dispatch(id.clone());
                                        dismissed.update(|d| { d.insert(id.clone()); });
                                    }
                                />
                            }
                        }).collect_view()}
                    </ul>
                    {older_failed.get().then(|| view! { <p class="pickup-note" role="status">"Couldn't load older items."</p> })}
                    {cursor.filter(|_| show_older).map(|before| {
                        let show_older = show_older_now.clone();
                        view! {
                        <button
                            type="button"
                            class="pickup-more"
                            disabled=move || older_pending.get()
                            on:click=move |_| show_older(before.clone())
                        >
                            "Show older"
                        </button>
                    }})}
                    {page.partial.then(|| view! { <p class="pickup-note">"Some items could not be read just now."</p> })}
                }
                .into_any()
            }
        }
    };

    view! {
        // Says quietly (a muted line from the stylesheet) when the cards are not live.
        <section
            class="pickup"
            aria-label="Pick up where you left off"
            data-live=move || match liveness.get() {
                Liveness::Live => "live",
                Liveness::Polling => "polling",
                Liveness::Connecting => "connecting",
            }
        >
            <Header filter=filter on_refresh=bump/>
            <div class="pickup-body">{body}</div>

            <p class="pickup-visually-hidden" aria-live="polite" role="status">{move || announcement.get()}</p>
        </section>
    }
}
