use crate::labels::Labels;
use leptos::prelude::*;
use std::sync::Arc;

/// The widget's outline: its region, named by its title, with whether it is live
/// (`data-live`, which the stylesheet words quietly when it is not) and its polite status line.
/// `drawn` marks a drawing made before the wasm (`components::drawing`), which the widget
/// replaces, and which announces nothing.
#[component]
pub fn Frame(
    labels: Arc<Labels>,
    live: impl Fn() -> &'static str + Send + Sync + 'static,
    #[prop(optional)] drawn: bool,
    #[prop(optional)] announcement: Option<RwSignal<String>>,
    children: Children,
) -> impl IntoView {
    view! {
        <section
            class="pickup"
            aria-label=labels.title.clone()
            data-live=live
            data-pickup-drawn=drawn.then_some("")
        >
            {children()}
            <p class="pickup-visually-hidden" aria-live="polite" role="status">{announcement.map(|a| move || a.get())}</p>
        </section>
    }
}

/// "Show older", under the list while there are older cards.
#[component]
pub fn ShowOlder(
    labels: Arc<Labels>,
    pending: impl Fn() -> bool + Send + Sync + 'static,
    on_click: impl Fn() + 'static,
) -> impl IntoView {
    view! {
        <button type="button" class="pickup-more" disabled=pending on:click=move |_| on_click()>
            {labels.show_older.clone()}
        </button>
    }
}

/// Said under the list when some of the page's items could not be read.
#[component]
pub fn PartialNote(labels: Arc<Labels>) -> impl IntoView {
    view! { <p class="pickup-note">{labels.partial.clone()}</p> }
}
