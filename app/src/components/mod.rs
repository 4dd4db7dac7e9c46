//! The widget: a header, then a list of cards. Each mounted widget owns its own signals and its
//! own token, so several can live on one page.

mod card;
mod header;
mod live;
mod states;
mod stream;

use crate::api::{dismiss, recent, BearerToken};
use crate::error::{ApiError, ErrorCode};
use crate::model::{Filter, RecentPage};
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

    let (ws, cap) = (config.ws.clone(), config.cap);
    // A page from a fetch or from the stream.
    let accept = move |page: RecentPage| {
        now.set(js_sys::Date::now());
        let fresh = live::new_titles(last_good.get_untracked().as_ref(), &page);
        if !fresh.is_empty() {
            announcement.set(format!("New: {}", fresh.join(", ")));
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
        async move { recent(ws, f, Some(cap)).await }
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
                let cards: Vec<_> = page.cards.into_iter().filter(|c| !hidden.contains(&c.id)).collect();
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
                    {page.more.then(|| view! { <p class="pickup-more">"Older items are not shown."</p> })}
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
