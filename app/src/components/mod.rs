//! The widget: a header, then a list of cards. Each mounted widget owns its own signals and its
//! own token, so several can live on one page.

mod card;
mod header;
mod states;

use crate::api::{recent, BearerToken};
use crate::error::{ApiError, ErrorCode};
use crate::model::{Filter, RecentPage};
use card::CardView;
use header::Header;
use leptos::prelude::*;
use leptos::task::spawn_local;
use states::{EmptyState, ErrorState, Skeleton};
use std::time::Duration;

/// Everything a host page tells a widget (from `data-pickup-*` attributes or `mount` options).
#[derive(Clone, Debug, PartialEq)]
pub struct WidgetConfig {
    pub ws: String,
    pub token: String,
    pub cap: u32,
    pub refresh: Duration,
}

/// The longest wait between two tries while the server keeps failing.
const MAX_BACKOFF: Duration = Duration::from_secs(300);

#[component]
pub fn Widget(config: WidgetConfig) -> impl IntoView {
    provide_context(BearerToken(config.token.clone()));
    let filter = RwSignal::new(Filter::All);
    // Bumped to fetch now: by the timer, the refresh button, a dismiss.
    let tick = RwSignal::new(0u64);
    let failures = RwSignal::new(0u32);
    let last_good = RwSignal::new(None::<RecentPage>);
    let error = RwSignal::new(None::<ApiError>);
    let now = RwSignal::new(js_sys::Date::now());

    let ws = config.ws.clone();
    let cap = config.cap;
    let fetched = LocalResource::new(move || {
        let (ws, f) = (ws.clone(), filter.get());
        tick.track();
        async move { recent(ws, f, Some(cap)).await }
    });
    Effect::new(move |_| match fetched.get() {
        Some(Ok(page)) => {
            now.set(js_sys::Date::now());
            last_good.set(Some(page));
            error.set(None);
            failures.set(0);
        }
        Some(Err(e)) => {
            error.set(Some(e));
            failures.update(|n| *n = n.saturating_add(1));
        }
        None => {}
    });

    let refresh = config.refresh;
    spawn_local(async move {
        loop {
            let backoff = refresh.saturating_mul(1 << failures.get_untracked().min(6));
            gloo_timers::future::sleep(backoff.min(MAX_BACKOFF)).await;
            let hidden = document().hidden();
            if !hidden && tick.try_update(|t| *t += 1).is_none() {
                break; // the widget is gone
            }
        }
    });
    // Relative times keep themselves current between fetches.
    spawn_local(async move {
        loop {
            gloo_timers::future::sleep(Duration::from_secs(30)).await;
            if now.try_set(js_sys::Date::now()).is_some() {
                break;
            }
        }
    });

    let ws = config.ws.clone();
    let body = move || {
        let ws = ws.clone();
        match (last_good.get(), error.get()) {
            (None, None) => Skeleton().into_any(),
            (None, Some(e)) if e.error == ErrorCode::Forbidden => view! {
                <p class="pickup-state pickup-forbidden" role="alert">
                    "You are not a member of this workspace, so its items are not shown."
                </p>
            }
            .into_any(),
            (None, Some(e)) => view! { <ErrorState error=e retry=move || tick.update(|t| *t += 1)/> }.into_any(),
            (Some(page), _) if page.cards.is_empty() => EmptyState().into_any(),
            (Some(page), stale) => view! {
                {stale.map(|_| view! { <p class="pickup-note" role="status">"Couldn't refresh; showing the last cards."</p> })}
                <ul class="pickup-list" aria-label="Recent items">
                    {page.cards.into_iter().map(|card| {
                        view! { <CardView card=card ws=ws.clone() now=now.into() on_dismissed=move || tick.update(|t| *t += 1)/> }
                    }).collect_view()}
                </ul>
                {page.more.then(|| view! { <p class="pickup-more">"Older items are not shown."</p> })}
                {page.partial.then(|| view! { <p class="pickup-note">"Some items could not be read just now."</p> })}
            }
            .into_any(),
        }
    };

    view! {
        <section class="pickup" aria-busy=move || fetched.get().is_none().to_string()>
            <Header filter=filter on_refresh=move || tick.update(|t| *t += 1)/>
            <div aria-live="polite">{body}</div>
        </section>
    }
}
