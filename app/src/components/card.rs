use crate::model::Card;
use crate::relative::relative_time;
use leptos::prelude::*;

/// A link only for http(s) or a relative path: anything else (`javascript:`) is shown as text.
fn safe_href(url: &str) -> Option<&str> {
    let lower = url.trim_start().to_ascii_lowercase();
    let ok = lower.starts_with("https://")
        || lower.starts_with("http://")
        || (lower.starts_with('/') && !lower.starts_with("//"));
    ok.then_some(url)
}

#[component]
pub fn CardView(
    card: Card,
    now: Signal<f64>,
    on_dismiss: impl Fn() + Clone + Send + Sync + 'static,
) -> impl IntoView {
    let badge = card.badge();
    // Finished items say when they finished; others when they last changed.
    let when = card
        .finished_at
        .clone()
        .unwrap_or_else(|| card.updated_at.clone());
    let when_ms = js_sys::Date::parse(&when);
    let title = match card.url.as_deref().and_then(safe_href) {
        Some(href) => {
            view! { <a class="pickup-card-title" href=href.to_string()>{card.title.clone()}</a> }
                .into_any()
        }
        None => view! { <span class="pickup-card-title">{card.title.clone()}</span> }.into_any(),
    };
    let progress_label = format!("Progress of {}", card.title);
    let progress = card.progress.map(|p| {
        // A whole percent: also keeps float formatting out of the bundle.
        let pct = (p.clamp(0.0, 1.0) * 100.0).round() as u32;
        view! {
            <div
                class="pickup-progress"
                role="progressbar"
                aria-label=progress_label
                aria-valuemin="0"
                aria-valuemax="100"
                aria-valuenow=pct.to_string()
            >
                // A CSSOM property, not a style attribute: the site's CSP allows no inline styles.
                <div class="pickup-progress-fill" style:width=format!("{pct}%")></div>
            </div>
        }
    });
    view! {
        <li class="pickup-card" data-status=badge data-id=card.id.clone()>
            <div class="pickup-card-top">
                {title}
                <span class=format!("pickup-badge pickup-badge-{badge}")>{badge}</span>
            </div>
            {progress}
            <div class="pickup-card-meta">
                <span class="pickup-owner">{card.owner.name.clone()}</span>
                <time datetime=when>{move || relative_time(when_ms, now.get())}</time>
                <button
                    type="button"
                    class="pickup-dismiss"
                    aria-label=format!("Dismiss {}", card.title)
                    on:click=move |_| on_dismiss()
                >
                    "×"
                </button>
            </div>
        </li>
    }
}
