use crate::labels::{fill, Labels};
use crate::model::Card;
use crate::relative::relative_time;
use js_sys::Intl::RelativeTimeFormat;
use leptos::prelude::*;
use std::sync::Arc;

/// The link for a stored `url`, or `None` when the title is shown as text. The server's rule
/// (check_url in server/src/index/core/record.rs), applied again because the widget must not
/// trust the store, with the browser's own URL parser, which is what follows the link: http(s)
/// with a host, or a path that starts with one '/'; no whitespace inside, no control or
/// bidirectional-control characters, no backslash (the parser reads `/\evil.example` as
/// `//evil.example`). public/safe-link.js is its twin, for the drawing before the wasm.
fn safe_href(url: &str) -> Option<String> {
    let u = url.trim();
    let refused = |c: char| {
        c.is_whitespace()
            || c.is_control()
            || c == '\\'
            || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
    };
    if u.is_empty() || u.len() > 2048 || u.chars().any(refused) {
        return None;
    }
    let ok = if u.starts_with('/') {
        !u.starts_with("//")
    } else {
        web_sys::Url::new(u).is_ok_and(|p| {
            matches!(p.protocol().as_str(), "http:" | "https:") && !p.hostname().is_empty()
        })
    };
    ok.then(|| u.to_string())
}

/// One card. Its accessible name is its title (`aria-labelledby`), so tests and assistive
/// technology find it as `listitem` by title; `id_prefix` keeps element ids unique per widget.
#[component]
pub fn CardView(
    card: Card,
    now: Signal<f64>,
    labels: Arc<Labels>,
    times: StoredValue<RelativeTimeFormat, LocalStorage>,
    id_prefix: String,
    /// The viewer opens the card's link; false: the host cancelled `pickup:open`.
    on_open: impl Fn() -> bool + 'static,
    on_dismiss: impl Fn() + Clone + Send + Sync + 'static,
) -> AnyView {
    let badge = card.badge();
    // Finished items say when they finished; others when they last changed.
    let when = card
        .finished_at
        .clone()
        .unwrap_or_else(|| card.updated_at.clone());
    let when_ms = js_sys::Date::parse(&when);
    let title_id = format!("{id_prefix}-{}", card.id);
    let title = match card.url.as_deref().and_then(safe_href) {
        Some(href) => view! {
            <a
                class="pickup-card-title"
                part="title"
                id=title_id.clone()
                href=href
                on:click=move |ev| {
                    if !on_open() {
                        ev.prevent_default();
                    }
                }
            >
                {card.title.clone()}
            </a>
        }
        .into_any(),
        None => view! { <span class="pickup-card-title" part="title" id=title_id.clone()>{card.title.clone()}</span> }
            .into_any(),
    };
    let progress_label = fill(&labels.progress, &card.title);
    let progress = card.progress.map(|p| {
        // A whole percent: also keeps float formatting out of the bundle.
        let pct = (p.clamp(0.0, 1.0) * 100.0).round() as u32;
        view! {
            <div
                class="pickup-progress"
                part="progress"
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
    let ago = move || {
        let (n, unit) = relative_time(when_ms, now.get());
        times
            .try_with_value(|t| String::from(t.format(n, unit.as_str())))
            .unwrap_or_default()
    };
    view! {
        <li class="pickup-card" part="card" data-status=badge data-id=card.id.clone() aria-labelledby=title_id>
            <div class="pickup-card-top">
                {title}
                <span class=format!("pickup-badge pickup-badge-{badge}") part="badge">{labels.badge(badge).to_string()}</span>
            </div>
            {progress}
            <div class="pickup-card-meta">
                <span class="pickup-owner">{card.owner.name.clone()}</span>
                <time datetime=when>{ago}</time>
                <button
                    type="button"
                    class="pickup-dismiss"
                    part="dismiss"
                    aria-label=fill(&labels.dismiss, &card.title)
                    on:click=move |_| on_dismiss()
                >
                    "×"
                </button>
            </div>
        </li>
    }
    // Erased: the list and its updates then handle one view type, not this card's nested
    // element types spelled out in every function that renders, rebuilds or drops them.
    .into_any()
}
