use crate::model::Filter;
use leptos::prelude::*;

/// Title, the Mine/Everyone toggle and the refresh button.
#[component]
pub fn Header(filter: RwSignal<Filter>, on_refresh: impl Fn() + 'static) -> impl IntoView {
    let toggle = move |f: Filter, label: &'static str| {
        view! {
            <button
                type="button"
                class="pickup-toggle"
                aria-pressed=move || (filter.get() == f).to_string()
                on:click=move |_| filter.set(f)
            >
                {label}
            </button>
        }
    };
    view! {
        <header class="pickup-header">
            <h2 class="pickup-title">"Pick up where you left off"</h2>
            <div class="pickup-controls" role="group" aria-label="Whose items">
                {toggle(Filter::Mine, "Mine")}
                {toggle(Filter::All, "Everyone")}
            </div>
            <button type="button" class="pickup-refresh" aria-label="Refresh" on:click=move |_| on_refresh()>
                "↻"
            </button>
        </header>
    }
}
