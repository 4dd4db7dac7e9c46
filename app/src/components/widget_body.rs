//! The widget's body: a state (loading, refused, failed, empty), or the list of cards with its
//! notes and "Show older" under it.

use super::since::Looks;
use super::widget_fetches::Calls;
use super::widget_state::{Shown, State};
use crate::components::card::CardView;
use crate::components::frame::{PartialNote, ShowOlder};
use crate::components::states::{EmptyState, ErrorState, Skeleton};
use crate::contract::{Card, DomEvent};
use crate::host::Host;
use crate::labels::Labels;
use js_sys::Intl::RelativeTimeFormat;
use leptos::prelude::*;
use std::rc::Rc;
use std::sync::Arc;
use wasm_bindgen::JsValue;

/// What the body draws with, besides the state.
#[derive(Clone)]
pub struct Body {
    pub state: State,
    pub calls: Calls,
    /// The widget's: "Show older" is scoped to it.
    pub owner: Owner,
    pub labels: Arc<Labels>,
    pub times: StoredValue<RelativeTimeFormat, LocalStorage>,
    pub id_prefix: String,
    pub host: StoredValue<Rc<Host>, LocalStorage>,
    pub looks: Looks,
}

impl Body {
    /// The body as it is now; only a change of what it shows ([`State::shown`]) redraws it.
    pub fn view(self) -> impl Fn() -> AnyView {
        move || {
            let l = self.labels.clone();
            match self.state.shown.get() {
                Shown::Loading => view! { <Skeleton labels=l/> }.into_any(),
                Shown::Forbidden => view! {
                    <p class="pickup-state pickup-forbidden" part="error" role="alert">{l.forbidden.clone()}</p>
                }
                .into_any(),
                Shown::Unauthenticated => view! {
                    <p class="pickup-state pickup-unauthenticated" part="error" role="alert">{l.unauthenticated.clone()}</p>
                }
                .into_any(),
                Shown::Failed(e) => {
                    let state = self.state;
                    view! { <ErrorState error=e labels=l retry=move || state.bump()/> }.into_any()
                }
                Shown::Empty => view! { <EmptyState labels=l/> }.into_any(),
                Shown::List => self.list(l),
            }
        }
    }

    /// The cards, keyed by id, with the notes and "Show older" under them.
    fn list(&self, l: Arc<Labels>) -> AnyView {
        let state = self.state;
        let (stale, older_note) = (l.stale.clone(), l.older_failed.clone());
        let (older_labels, partial_labels) = (l.clone(), l.clone());
        let (calls, owner, list_label) = (self.calls, self.owner.clone(), l.list.clone());
        let cards = self.clone();
        let card = move |card: Card| cards.card(card);
        view! {
            {move || (state.error.with(Option::is_some)).then(|| view! {
                <p class="pickup-note pickup-stale" role="status">{stale.clone()}</p>
            })}
            <ul class="pickup-list" aria-label=list_label>
                <For each=move || state.visible.get() key=|c| c.id.clone() children=card/>
            </ul>
            {move || state.older_failed.get().then(|| view! { <p class="pickup-note" role="status">{older_note.clone()}</p> })}
            {move || state.cursor().filter(|_| state.more()).map(|before| {
                let owner = owner.clone();
                view! {
                    <ShowOlder labels=older_labels.clone() pending=move || state.older_pending.get() on_click=move || calls.show_older(&owner, before.clone())/>
                }
            })}
            {move || state.partial().then(|| view! { <PartialNote labels=partial_labels.clone()/> })}
        }
        .into_any()
    }

    /// The card of `card`'s item, as the item is in [`State::visible`] now.
    fn card(&self, card: Card) -> View<AnyView> {
        let (state, calls, host, looks) = (self.state, self.calls, self.host, self.looks);
        let id = card.id.clone();
        let (dismissed_id, current_id, pin_id) = (id.clone(), id.clone(), id.clone());
        let current = Signal::derive(move || {
            state
                .visible
                .with(|v| v.iter().find(|c| c.id == current_id).cloned())
                .unwrap_or_else(|| card.clone())
        });
        let since = Signal::derive(move || current.with(|c| looks.of(c)));
        view! {
            <CardView
                id=id
                card=current
                since=since
                now=state.now.into()
                labels=self.labels.clone()
                times=Some(self.times)
                id_prefix=self.id_prefix.clone()
                on_open=move || {
                    host.try_with_value(|h| h.open(&current.get_untracked())).unwrap_or(true)
                }
                on_pin=move |pinned| calls.pin(pin_id.clone(), pinned)
                on_dismiss=move || {
                    // Hidden at once; if the server refuses, a refresh brings it back.
                    let id = dismissed_id.clone();
                    calls.dismiss(id.clone());
                    state.dismissed.update(|d| d.push(id.clone()));
                    host.try_with_value(|h| h.emit(DomEvent::Dismiss, &[("id", JsValue::from_str(&id))]));
                }
            />
        }
    }
}
