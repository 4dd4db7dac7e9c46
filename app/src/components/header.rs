use super::icon::{icon, REFRESH};
use crate::contract::Filter;
use crate::labels::Labels;
use leptos::prelude::*;
use std::sync::Arc;

/// Title, the Mine/Everyone toggle and the refresh button.
#[component]
pub fn Header(
    filter: RwSignal<Filter>,
    labels: Arc<Labels>,
    on_refresh: impl Fn() + 'static,
    /// The bell, where the widget shows one (not in the server's drawing).
    #[prop(optional_no_strip)]
    bell: Option<AnyView>,
) -> impl IntoView {
    let toggle = move |f: Filter, label: String| {
        view! {
            <button
                type="button"
                class="pickup-toggle"
                part="toggle"
                aria-pressed=move || (filter.get() == f).to_string()
                on:click=move |_| filter.set(f)
            >
                {label}
            </button>
        }
    };
    view! {
        <header class="pickup-header" part="header">
            // Focusable by script only: where focus goes when the last card is dismissed.
            <h2 class="pickup-title" tabindex="-1">{labels.title.clone()}</h2>
            <div class="pickup-controls" role="group" aria-label=labels.whose_items.clone()>
                {toggle(Filter::Mine, labels.mine.clone())}
                {toggle(Filter::All, labels.everyone.clone())}
            </div>
            {bell}
            <button type="button" class="pickup-refresh" aria-label=labels.refresh.clone() on:click=move |_| on_refresh()>
                {icon(REFRESH)}
            </button>
        </header>
    }
}
