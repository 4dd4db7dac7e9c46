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

/// "3 changes since you looked", and "Mark seen", while anything shown changed since. Drawn from
/// the first page on (the drawing too), so it never comes later, above the cards.
#[component]
pub fn SinceBar(
    changes: impl Fn() -> usize + Send + Sync + 'static,
    labels: Arc<Labels>,
    on_mark: impl Fn(web_sys::MouseEvent) + Clone + Send + Sync + 'static,
) -> impl IntoView {
    let (one, many) = (labels.one_change.clone(), labels.changes.clone());
    let mark = labels.mark_seen.clone();
    move || {
        let n = changes();
        let on_mark = on_mark.clone();
        (n > 0).then(|| {
            view! {
                <div class="pickup-since-bar">
                    <p class="pickup-since-count" role="status">
                        {if n == 1 { one.clone() } else { many.replace("{count}", &n.to_string()) }}
                    </p>
                    <button type="button" class="pickup-mark-seen" part="mark-seen" on:click=on_mark>
                        {mark.clone()}
                    </button>
                </div>
            }
        })
    }
}
