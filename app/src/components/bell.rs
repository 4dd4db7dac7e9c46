//! A word when the viewer's own items end: `pickup:finished` on the element (always), and,
//! from a widget that shows the bell while it is on in this browser, a notification shown by
//! the tab that holds that widget's shared stream while no tab showing a widget is visible
//! (public/share.js decides that). Which items ended is `finished::Endings`'s rule.

use super::card::ms;
use super::icon::{icon, BELL, BELL_OFF};
use super::stream::Handle;
use super::widget_state::State;
use crate::contract::names::{storage, SHARE};
use crate::contract::{Card, DomEvent};
use crate::finished::{Ending, Endings};
use crate::host::Host;
use crate::labels::Labels;
use leptos::prelude::*;
use std::rc::Rc;
use std::sync::Arc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The bell: this browser's opt-in, kept in its localStorage (`storage::BELL`), and the
/// browser's permission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BellState {
    /// Opted in, and permitted.
    On,
    Off,
    /// The browser refuses.
    Denied,
    /// No Notification API, or storage blocked.
    Unsupported,
}

/// share.js's function `name` (None without share.js, or with an older one that has none).
pub(super) fn share_fn(name: &str) -> Option<js_sys::Function> {
    let share = js_sys::Reflect::get(&js_sys::global(), &js_sys::Symbol::for_(SHARE)).ok()?;
    js_sys::Reflect::get(&share, &name.into())
        .ok()?
        .dyn_into()
        .ok()
}

/// The bell in this browser now.
pub fn bell() -> BellState {
    use web_sys::NotificationPermission as Permission;
    if !js_sys::Reflect::has(&js_sys::global(), &"Notification".into()).unwrap_or(false) {
        return BellState::Unsupported;
    }
    match web_sys::Notification::permission() {
        Permission::Denied => BellState::Denied,
        Permission::Granted => match window().local_storage().ok().flatten() {
            None => BellState::Unsupported,
            Some(storage) => match storage.get_item(storage::BELL) {
                Ok(Some(on)) if on == "on" => BellState::On,
                Ok(_) => BellState::Off,
                Err(_) => BellState::Unsupported,
            },
        },
        _ => BellState::Off,
    }
}

/// The viewer's click on the bell: off, or on, asking the browser's permission if it was never
/// given (never before a click). The bell as it is then.
async fn ring() -> BellState {
    use web_sys::{Notification, NotificationPermission as Permission};
    let storage = window().local_storage().ok().flatten();
    match (bell(), storage) {
        (BellState::On, Some(storage)) => {
            let _ = storage.remove_item(storage::BELL);
        }
        (BellState::Off, Some(storage)) => {
            let granted = Notification::permission() == Permission::Granted
                || match Notification::request_permission() {
                    Ok(asked) => wasm_bindgen_futures::JsFuture::from(asked)
                        .await
                        .is_ok_and(|answer| answer.as_string().as_deref() == Some("granted")),
                    Err(_) => false,
                };
            if granted {
                let _ = storage.set_item(storage::BELL, "on");
            }
        }
        _ => {}
    }
    bell()
}

/// The header's bell: a toggle, pressed while this browser notifies the viewer. The browser's
/// permission is asked on its click, never before.
#[component]
pub fn Bell(labels: Arc<Labels>, state: RwSignal<BellState>) -> impl IntoView {
    let label = move || match state.get() {
        BellState::On => labels.bell_on.clone(),
        BellState::Denied => labels.bell_denied.clone(),
        BellState::Off | BellState::Unsupported => labels.bell_off.clone(),
    };
    let ring = move |_| {
        leptos::task::spawn_local(async move {
            state.try_set(ring().await);
        });
    };
    move || {
        (state.get() != BellState::Unsupported).then(|| {
            let label = label.clone();
            view! {
                <button
                    type="button"
                    class="pickup-bell"
                    part="bell"
                    aria-pressed=move || (state.get() == BellState::On).to_string()
                    aria-label=label.clone()
                    title=label
                    on:click=ring
                >
                    {icon(move || if state.get() == BellState::On { BELL } else { BELL_OFF })}
                </button>
            }
        })
    }
}

/// On each page: `pickup:finished` for each of the viewer's own items that reached a final
/// status, and, when this widget shows the bell (`notify`), a notification (through share.js)
/// for those and the ones that stalled.
pub fn watch_endings(
    host: Rc<Host>,
    state: State,
    labels: Arc<Labels>,
    stream: Handle,
    notify: bool,
) {
    let endings = StoredValue::new_local(Endings::default());
    Effect::new(move |_| {
        let Some(page) = state.last_good.get() else {
            return;
        };
        let Some(viewer) = host.viewer() else {
            return;
        };
        let Some(news) = endings.try_update_value(|e| e.news(&page, &viewer, ms)) else {
            return;
        };
        for (card, ending) in news {
            if ending == Ending::Finished {
                host.emit(DomEvent::Finished, &detail(&card));
            }
            if notify && bell() == BellState::On {
                tell(&host, &stream, &card, labels.badge(card.badge()));
            }
        }
    });
}

/// The card as `pickup:finished`'s detail: its link only as the card would link it.
fn detail(card: &Card) -> Vec<(&'static str, JsValue)> {
    let text = |s: &str| JsValue::from_str(s);
    let owner = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&owner, &"sub".into(), &text(&card.owner.sub));
    let _ = js_sys::Reflect::set(&owner, &"name".into(), &text(&card.owner.name));
    vec![
        ("id", text(&card.id)),
        ("key", text(&card.key)),
        ("title", text(&card.title)),
        ("url", card.href().as_deref().map_or(JsValue::NULL, text)),
        ("status", text(card.status.as_str())),
        ("owner", owner.into()),
        (
            "finished_at",
            card.finished_at.as_deref().map_or(JsValue::NULL, text),
        ),
    ]
}

/// Asks share.js to show the word for `card`: it does from the tab that holds this widget's
/// stream, with the bell on, while no widget is in view. Its click opens the item as a click
/// on its card does: `pickup:open` first, which the host may cancel (it routes the link).
fn tell(host: &Rc<Host>, stream: &Handle, card: &Card, status: &str) {
    let Some(notify) = share_fn("notify") else {
        return;
    };
    let note = js_sys::Object::new();
    let set = |k: &str, v: &str| js_sys::Reflect::set(&note, &k.into(), &v.into());
    let _ = set("tag", &card.id);
    let _ = set("title", &card.title);
    let _ = set("body", status);
    let (opener, card) = (Rc::downgrade(host), card.clone());
    let open = Closure::once_into_js(move || {
        if let (Some(host), Some(href)) = (opener.upgrade(), card.href()) {
            if host.open(&card) {
                let _ = window().location().assign(&href);
            }
        }
    });
    let feed = stream.feed().unwrap_or(JsValue::NULL);
    if let Ok(p) = notify.call3(&JsValue::NULL, &feed, &note, &open) {
        // A rejection (a browser that refuses the notification) is nothing the viewer can act on.
        if let Ok(p) = p.dyn_into::<js_sys::Promise>() {
            leptos::task::spawn_local(async move {
                let _ = wasm_bindgen_futures::JsFuture::from(p).await;
            });
        }
    }
}
