use crate::contract::ApiError;
use crate::labels::Labels;
use leptos::prelude::*;
use std::sync::Arc;

/// Placeholder cards with the shape of real ones, so nothing jumps when data arrives.
#[component]
pub fn Skeleton(labels: Arc<Labels>) -> impl IntoView {
    view! {
        <ul class="pickup-list pickup-skeleton" aria-hidden="true">
            {(0..3).map(|_| view! { <li class="pickup-card"><span class="pickup-bone"></span></li> }).collect_view()}
        </ul>
        <p class="pickup-visually-hidden">{labels.loading.clone()}</p>
    }
}

#[component]
pub fn EmptyState(labels: Arc<Labels>) -> impl IntoView {
    view! { <p class="pickup-state pickup-empty" part="empty">{labels.empty.clone()}</p> }
}

#[component]
pub fn ErrorState(
    error: ApiError,
    labels: Arc<Labels>,
    retry: impl Fn() + 'static,
) -> impl IntoView {
    view! {
        <div class="pickup-state pickup-error" part="error" role="alert">
            <p>{labels.load_failed.clone()} " " {error.message}</p>
            <button type="button" on:click=move |_| retry()>{labels.try_again.clone()}</button>
        </div>
    }
}
