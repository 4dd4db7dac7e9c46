//! "Since you looked": the viewer's last look at the workspace, read once per visit (after the
//! first page, or with it: the loader's drawing carries both), the cards' marks counted from it
//! (`contract::look`), and "Mark seen", which moves it to the page on screen. A viewer who has
//! never looked gets a look at once, at the first page: nothing is marked on a first visit. The
//! look is the viewer's own object in the store; it is written on "Mark seen" (and on that first
//! visit) only, never on a timer. The first page's cards wait for the look
//! (`State::look_answered`), so that its marks and the since bar never move them when it comes.

use super::card::ms;
use super::frame::SinceBar;
use super::widget_state::State;
use crate::contract::{Card, LastLook, Since};
use crate::host::Host;
use crate::labels::Labels;
use leptos::prelude::*;
use std::rc::Rc;
use std::sync::Arc;

/// The widget's look: `None` until known (or when it could not be read: nothing is then
/// marked, and nothing written).
#[derive(Clone, Copy)]
pub struct Looks {
    pub looked: RwSignal<Option<f64>>,
    /// How many of the cards shown changed since, and how many of those ended.
    pub changes: Memo<usize>,
    pub finished: Memo<usize>,
    stored: StoredValue<(String, Rc<Host>), LocalStorage>,
    state: State,
}

impl Looks {
    pub fn new(ws: String, host: Rc<Host>, state: State) -> Self {
        let looked = RwSignal::new(None::<f64>);
        let count = move |of: fn(Since) -> bool| {
            Memo::new(move |_| {
                let Some(at) = looked.get() else {
                    return 0;
                };
                state.visible.with(|cards| {
                    cards
                        .iter()
                        .filter_map(|c| Since::of(c, at, ms))
                        .filter(|s| of(*s))
                        .count()
                })
            })
        };
        let looks = Looks {
            looked,
            changes: count(|_| true),
            finished: count(|s| s == Since::Finished),
            stored: StoredValue::new_local((ws, host)),
            state,
        };
        looks.read();
        looks
    }

    /// What changed about `card` since the look.
    pub fn of(self, card: &Card) -> Option<Since> {
        Since::of(card, self.looked.get()?, ms)
    }

    /// Asks for the look once the first page is in (the loader's drawing brought it too); a
    /// viewer who never looked gets one at that page.
    fn read(self) {
        let state = self.state;
        Effect::new(move |done: Option<bool>| {
            if done == Some(true) {
                return true;
            }
            let Some(first) = state
                .last_good
                .with(|p| p.as_ref().map(|p| p.generated_at.clone()))
            else {
                return false;
            };
            let Some((ws, host)) = self.stored.try_get_value() else {
                return true;
            };
            leptos::task::spawn_local(async move {
                match host.call(|| host.endpoint.looked(&ws)).await {
                    Ok(LastLook { at: None }) => self.write(first),
                    Ok(LastLook { at }) => {
                        self.looked.try_set(at.as_deref().and_then(ms));
                    }
                    // Not "never looked": nothing is marked, and nothing written.
                    Err(e) => host.error(&e),
                }
                state.look_answered.try_set(true);
            });
            true
        });
    }

    /// The look moves to `at` (a page's `generated_at`); its marks go at once.
    fn write(self, at: String) {
        let Some((ws, host)) = self.stored.try_get_value() else {
            return;
        };
        let looked = self.looked;
        leptos::task::spawn_local(async move {
            match host.call(|| host.endpoint.look(&ws, &at)).await {
                Ok(look) => {
                    if let Some(at) = look.at.as_deref().and_then(ms) {
                        looked.try_set(Some(at));
                    }
                }
                Err(e) => host.error(&e),
            }
        });
    }

    /// "Mark seen": the look moves to the page on screen.
    pub fn mark_seen(self) {
        let at = self
            .state
            .last_good
            .try_with_untracked(|p| p.as_ref().map(|p| p.generated_at.clone()));
        if let Some(Some(at)) = at {
            self.looked.set(ms(&at));
            self.write(at);
        }
    }

    /// The since bar of these looks.
    pub fn bar(self, labels: Arc<Labels>) -> impl IntoView {
        view! {
            <SinceBar changes=move || self.changes.get() labels=labels on_mark=move |ev| {
                keep_focus_in_widget(&ev);
                self.mark_seen();
            }/>
        }
    }
}

/// The button goes with the marks: focus goes to the widget's heading, not the page's body.
fn keep_focus_in_widget(ev: &web_sys::MouseEvent) {
    use wasm_bindgen::JsCast;
    let heading = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .and_then(|b| b.closest("section.pickup").ok().flatten())
        .and_then(|s| s.query_selector(".pickup-title").ok().flatten())
        .and_then(|h| h.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(heading) = heading {
        let _ = heading.focus();
    }
}
