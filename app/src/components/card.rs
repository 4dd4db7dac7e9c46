use super::icon::{icon, DISMISS, PIN};
use crate::contract::link::safe_link;
use crate::contract::{Card, Since};
use crate::labels::{fill, Labels};
use crate::relative::relative_time;
use js_sys::Intl::RelativeTimeFormat;
use leptos::prelude::*;
use std::sync::Arc;

/// The link for a stored `url`, or `None` when the title is shown as text: the contract's rule
/// (`contract::link`), the one the server wrote it by, applied again because the widget must not
/// trust the store. In the browser, whether a URL is http(s) with a host is the browser's own URL
/// parser's answer, since it is what follows the link; on the server, drawing before the wasm,
/// the `url` crate's.
pub(crate) fn safe_href(url: &str) -> Option<String> {
    #[cfg(feature = "csr")]
    let http_with_host = |u: &str| {
        web_sys::Url::new(u).is_ok_and(|p| {
            matches!(p.protocol().as_str(), "http:" | "https:") && !p.hostname().is_empty()
        })
    };
    #[cfg(not(feature = "csr"))]
    let http_with_host = |u: &str| {
        url::Url::parse(u)
            .is_ok_and(|p| matches!(p.scheme(), "http" | "https") && p.host().is_some())
    };
    safe_link(url, http_with_host).map(str::to_string)
}

impl Card {
    /// The card's link, when its `url` passes the link rule ([`safe_href`]): what its title
    /// links to, what `pickup:open` and `pickup:finished` say, what a notification opens.
    pub(crate) fn href(&self) -> Option<String> {
        self.url.as_deref().and_then(safe_href)
    }
}

/// The instant an RFC 3339 time names, in ms (NaN when it names none).
fn instant_ms(when: &str) -> f64 {
    #[cfg(feature = "csr")]
    return js_sys::Date::parse(when);
    #[cfg(not(feature = "csr"))]
    return chrono::DateTime::parse_from_rfc3339(when)
        .map_or(f64::NAN, |t| t.timestamp_millis() as f64);
}

/// The instant an RFC 3339 time names, in ms, as a card reads its times; `None` when it names
/// none.
pub(crate) fn ms(when: &str) -> Option<f64> {
    let t = instant_ms(when);
    t.is_finite().then_some(t)
}

/// The date and time `when` (RFC 3339) says, in full, in the viewer's locale: what a relative
/// time stands for, for a pointer (`title`) and a screen reader.
fn full_time(when: &str, times: &RelativeTimeFormat) -> String {
    let options = js_sys::Object::new();
    for (k, v) in crate::relative::DATE_WORDS {
        let _ = js_sys::Reflect::set(&options, &k.into(), &v.into());
    }
    // The relative times' locale (the viewer's, or the one the host set).
    let locales = js_sys::Reflect::get(&times.resolved_options(), &"locale".into())
        .map(|l| js_sys::Array::of1(&l))
        .unwrap_or_default();
    let format = js_sys::Intl::DateTimeFormat::new(&locales, &options);
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_str(when));
    format
        .format()
        .call1(&format, &date)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| when.to_string())
}

/// After "Dismiss" on a card, where focus goes, as its card leaves: the next card's dismiss
/// button, else the previous card's, else the widget's heading (never the page's body).
fn move_focus_on(button: &web_sys::Element) {
    use wasm_bindgen::JsCast;
    let card = button.closest("li.pickup-card").ok().flatten();
    let neighbour = card.as_ref().and_then(|c| {
        c.next_element_sibling()
            .or_else(|| c.previous_element_sibling())
    });
    let target = match neighbour.and_then(|n| n.query_selector(".pickup-dismiss").ok().flatten()) {
        Some(next) => Some(next),
        None => button
            .closest("section.pickup")
            .ok()
            .flatten()
            .and_then(|s| s.query_selector(".pickup-title").ok().flatten()),
    };
    if let Some(el) = target.and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()) {
        let _ = el.focus();
    }
}

/// One card, its elements its item's for as long as the item is listed (the list is keyed by
/// id): what changes in the item changes in place, so nothing a viewer focused or points at
/// ever comes to mean another item. Its accessible name is its title (`aria-labelledby`), so
/// tests and assistive technology find it as `listitem` by title; `id_prefix` keeps element
/// ids unique per widget.
#[component]
pub fn CardView(
    /// The item's id: what this card is, for good.
    id: String,
    /// The item as it is now.
    card: Signal<Card>,
    /// What changed about it since the viewer looked (none in the server's drawing).
    #[prop(optional)]
    since: Option<Signal<Option<Since>>>,
    now: Signal<f64>,
    labels: Arc<Labels>,
    /// The viewer's words for times, or `None` on the server, which leaves them to the browser:
    /// it words each `<time>` by its `data-ago` (public/drawing.js).
    times: Option<StoredValue<RelativeTimeFormat, LocalStorage>>,
    id_prefix: String,
    /// The viewer opens the card's link; false: the host cancelled `pickup:open`.
    on_open: impl Fn() -> bool + Send + Sync + 'static,
    /// The viewer pins the item (`true`) or unpins it.
    on_pin: impl Fn(bool) + Send + Sync + 'static,
    on_dismiss: impl Fn() + Clone + Send + Sync + 'static,
) -> AnyView {
    let badge = Memo::new(move |_| card.with(|c| c.badge()));
    // Finished items say when they finished; others when they last changed.
    let when = Memo::new(move |_| {
        card.with(|c| {
            c.finished_at
                .clone()
                .unwrap_or_else(|| c.updated_at.clone())
        })
    });
    let title_text = Memo::new(move |_| card.with(|c| c.title.clone()));
    let href = Memo::new(move |_| card.with(Card::href));
    let title_id = format!("{id_prefix}-{id}");
    let pct = Memo::new(move |_| {
        // A whole percent: also keeps float formatting out of the bundle.
        card.with(|c| {
            c.progress
                .map(|p| (p.clamp(0.0, 1.0) * 100.0).round() as u32)
        })
    });
    let badge_labels = labels.clone();
    let since = since.unwrap_or_else(|| Signal::stored(None));
    let since_labels = labels.clone();
    let mark = move || {
        since.get().map(|s| {
            let word = match s {
                Since::New => since_labels.since_new.clone(),
                Since::Finished => since_labels.since_finished.clone(),
            };
            view! { <span class="pickup-since" part="since">{word}</span> }
        })
    };
    // The detail is the card's description, read with it after its name; always there (empty,
    // and not drawn, without one): an element that came and went cost the widget a kilobyte.
    let detail_id = format!("{title_id}-detail");
    let described_by = detail_id.clone();
    let title = title(title_id.clone(), href, title_text, Arc::new(on_open));
    view! {
        <li class="pickup-card" part="card" data-status=move || badge.get() data-since=move || since.get().map(Since::as_str) data-id=id aria-labelledby=title_id aria-describedby=described_by>
            <div class="pickup-card-top">
                {title}
                {mark}
                <span class=move || format!("pickup-badge pickup-badge-{}", badge.get()) part="badge">
                    {move || badge_labels.badge(badge.get()).to_string()}
                </span>
            </div>
            <p class="pickup-card-detail" id=detail_id>{move || card.with(|c| c.detail.clone())}</p>
            {progress(pct, labels.progress.clone(), title_text)}
            <div class="pickup-card-meta">
                <span class="pickup-owner">{move || card.with(|c| c.owner.name.clone())}</span>
                {time_of(when, now, times)}
                {pin_button(&labels, move || card.with(|c| c.pinned), title_text, on_pin)}
                {dismiss_button(labels.dismiss.clone(), title_text, on_dismiss)}
            </div>
        </li>
    }
    // Erased: the list and its updates then handle one view type, not this card's nested
    // element types spelled out in every function that renders, rebuilds or drops them.
    .into_any()
}

/// The card's title: a link when its `url` passes the link rule, else text. A click on the link
/// asks the host first (`pickup:open`, which it may cancel).
fn title(
    title_id: String,
    href: Memo<Option<String>>,
    text: Memo<String>,
    on_open: Arc<impl Fn() -> bool + Send + Sync + 'static>,
) -> impl IntoView {
    move || {
        match href.get() {
        Some(href) => {
            let on_open = on_open.clone();
            view! {
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
                    {move || text.get()}
                </a>
            }
            .into_any()
        }
        None => view! { <span class="pickup-card-title" part="title" id=title_id.clone()>{move || text.get()}</span> }
            .into_any(),
    }
    }
}

/// The progress bar, for an item that reports progress, named for its item.
fn progress(pct: Memo<Option<u32>>, label: String, title: Memo<String>) -> impl IntoView {
    move || {
        pct.get().map(|pct| {
            view! {
                <div
                    class="pickup-progress"
                    part="progress"
                    role="progressbar"
                    aria-label=fill(&label, &title.get())
                    aria-valuemin="0"
                    aria-valuemax="100"
                    aria-valuenow=pct.to_string()
                >
                    // A rectangle `pct` wide: an attribute, not a style (the site's CSP allows
                    // none), so the server's drawing is the same markup, with no script.
                    <svg class="pickup-progress-bar" aria-hidden="true">
                        <rect class="pickup-progress-fill" width=format!("{pct}%") height="100%"></rect>
                    </svg>
                </div>
            }
        })
    }
}

/// "3 min. ago", with the date and time it stands for for a pointer (`title`) and a screen
/// reader; `data-ago` carries the unit and count, for a browser that words them itself.
fn time_of(
    when: Memo<String>,
    now: Signal<f64>,
    times: Option<StoredValue<RelativeTimeFormat, LocalStorage>>,
) -> impl IntoView {
    // Closures, not a memo: a memo of a new type costs the widget more than the sum is worth.
    let ago_in = move || relative_time(instant_ms(&when.get()), now.get());
    let ago = move || {
        let (n, unit) = ago_in();
        times
            .and_then(|t| t.try_with_value(|t| String::from(t.format(n, unit.as_str()))))
            .unwrap_or_default()
    };
    // A whole number: float formatting would cost the widget kilobytes.
    let ago_data = move || {
        let (n, unit) = ago_in();
        format!("{} {}", n as i64, unit.as_str())
    };
    let full = Memo::new(move |_| {
        let when = when.get();
        times
            .and_then(|t| t.try_with_value(|t| full_time(&when, t)))
            .unwrap_or_default()
    });
    view! {
        <time datetime=move || when.get() data-ago=ago_data title=move || full.get()>{ago}</time>
        <span class="pickup-visually-hidden">{move || format!(", {}", full.get())}</span>
    }
}

/// The dismiss button (a cross), named for its item; focus moves on before its card leaves.
fn dismiss_button(
    label: String,
    title: Memo<String>,
    on_dismiss: impl Fn() + Clone + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <button
            type="button"
            class="pickup-dismiss"
            part="dismiss"
            aria-label=move || fill(&label, &title.get())
            on:click=move |ev| {
                use wasm_bindgen::JsCast;
                if let Some(button) = ev.current_target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) {
                    move_focus_on(&button);
                }
                on_dismiss()
            }
        >
            {icon(DISMISS)}
        </button>
    }
}

/// The pin button, pressed while the item is pinned, named for its item. Its card moves to the
/// top, or back among the others, once the page that says so arrives (`Calls::pin` puts focus
/// back on it then).
fn pin_button(
    labels: &Labels,
    pinned: impl Fn() -> bool + Copy + Send + Sync + 'static,
    title: Memo<String>,
    on_pin: impl Fn(bool) + Send + Sync + 'static,
) -> impl IntoView {
    let (pin, unpin) = (labels.pin.clone(), labels.unpin.clone());
    view! {
        <button
            type="button"
            class="pickup-pin"
            part="pin"
            aria-pressed=move || pinned().to_string()
            aria-label=move || fill(if pinned() { &unpin } else { &pin }, &title.get())
            on:click=move |_| on_pin(!pinned())
        >
            {icon(PIN)}
        </button>
    }
}
