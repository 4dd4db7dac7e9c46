use crate::error::ApiError;
use leptos::prelude::*;

/// Placeholder cards with the shape of real ones, so nothing jumps when data arrives.
#[component]
pub fn Skeleton() -> impl IntoView {
    view! {
        <ul class="pickup-list pickup-skeleton" aria-hidden="true">
            {(0..3).map(|_| view! { <li class="pickup-card"><span class="pickup-bone"></span></li> }).collect_view()}
        </ul>
        <p class="pickup-visually-hidden">"Loading recent items…"</p>
    }
}

#[component]
pub fn EmptyState() -> impl IntoView {
    view! {
        <p class="pickup-state pickup-empty">
            "Nothing in flight. Runs, uploads and jobs of this workspace will appear here as they start."
        </p>
    }
}

#[component]
pub fn ErrorState(error: ApiError, retry: impl Fn() + 'static) -> impl IntoView {
    view! {
        <div class="pickup-state pickup-error" role="alert">
            <p>"Couldn't load recent items: " {error.message}</p>
            <button type="button" on:click=move |_| retry()>"Try again"</button>
        </div>
    }
}
