//! The widget: a header, then a list of cards. Each mounted widget owns its own signals, its
//! own server and its own token (its [`Host`]), so several can live on one page. Its parts:
//! [`State`] (`widget_state`), [`Calls`] (`widget_fetches`), `widget_upkeep` and [`Body`]
//! (`widget_body`).

use super::bell::{self, Bell};
use super::frame::Frame;
use super::header::Header;
use super::since::Looks;
use super::stream::Liveness;
use super::widget_body::Body;
use super::widget_fetches::Calls;
use super::widget_state::State;
use super::widget_upkeep;
use crate::contract::Filter;
use crate::host::Host;
use crate::labels::Labels;
use leptos::prelude::*;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// Everything a host page tells a widget (from `data-pickup-*` attributes or `mount` options).
/// Its server and token are the [`Host`]'s.
#[derive(Clone)]
pub struct WidgetConfig {
    pub ws: String,
    pub cap: u32,
    pub refresh: Duration,
    pub labels: Arc<Labels>,
    /// Relative times in the viewer's locale, or the one the host set.
    pub times: js_sys::Intl::RelativeTimeFormat,
    /// Unique per widget on the page: the cards' element ids start with it.
    pub id_prefix: String,
    /// Whose items the widget shows first; the viewer's toggle changes it.
    pub filter: Filter,
    /// Shows the bell (`notify`; always on the home page).
    pub notify: bool,
    /// An item's id left out: the widget asks for one card more, and shows `cap` others.
    pub exclude: Option<String>,
    /// The home page's widget: the document's title counts what finished since the look.
    pub home: bool,
}

#[component]
pub fn Widget(config: WidgetConfig, host: Rc<Host>) -> impl IntoView {
    // Left out: asked for with one card more, so that `cap` others are still shown.
    let exclude = config.exclude.clone().map(|id| (id, config.cap));
    let cap = (config.cap + u32::from(exclude.is_some())).min(crate::contract::MAX_CAP);
    let state = State::new(config.filter, exclude);
    Effect::new(move |_| {
        state.filter.track();
        state.reset_older();
    });
    hand_over_drawing(host.clone(), state);
    state.keep_focus(host.element.clone());

    let calls = Calls::new(config.ws.clone(), host.clone(), state, cap);
    let looks = Looks::new(config.ws.clone(), host.clone(), state);
    if config.home {
        count_in_title(looks);
    }
    let new_items = config.labels.new_items.clone();
    let view = super::stream::View {
        ws: config.ws.clone(),
        cap,
        notify: config.notify,
    };
    let stream = widget_upkeep::open_stream(&host, view, state, new_items.clone());
    bell::watch_endings(
        host.clone(),
        state,
        config.labels.clone(),
        stream.clone(),
        config.notify,
    );
    let bell_state = RwSignal::new(bell::bell());
    if config.notify {
        // The bell is the browser's: turned on or off in another tab, it is so here too (else
        // this tab's click would turn off a bell it shows as off).
        let other_tab = super::live::listen(&window(), "storage", move || {
            bell_state.try_set(bell::bell());
        });
        host.on_unmount(other_tab);
    }
    let bell = config
        .notify
        .then(|| view! { <Bell labels=config.labels.clone() state=bell_state/> }.into_any());
    calls.fetch_on_tick(stream.clone(), new_items);
    widget_upkeep::keep_current(&host, config.refresh, state, stream);

    let body = Body {
        state,
        calls,
        // Scoped to the widget's owner: a page that comes after the widget is gone is dropped.
        owner: Owner::current().expect("a widget has an owner"),
        labels: config.labels.clone(),
        times: StoredValue::new_local(config.times.clone()),
        id_prefix: config.id_prefix.clone(),
        host: StoredValue::new_local(host.clone()),
        looks,
    };
    let live = move || match state.liveness.get() {
        Liveness::Live => "live",
        Liveness::Polling => "polling",
        Liveness::Connecting => "connecting",
    };
    view! {
        <Frame labels=config.labels.clone() live=live announcement=state.announcement>
            <Header filter=state.filter labels=config.labels.clone() on_refresh=move || state.bump() bell=bell/>
            {looks.bar(config.labels.clone())}
            <div class="pickup-body">{body.view()}</div>
        </Frame>
    }
}

/// "(2) Pickup": the home page's title counts the items that finished since the viewer looked.
fn count_in_title(looks: Looks) {
    let document = leptos::prelude::document();
    let base = document.title();
    Effect::new(move |_| {
        let n = looks.finished.get();
        document.set_title(&if n > 0 {
            format!("({n}) {base}")
        } else {
            base.clone()
        });
    });
}

/// The drawing of the first page stands in for the widget until it shows the first page (with
/// its look), or an error, itself. Then the effect reads no signal, and is done.
fn hand_over_drawing(host: Rc<Host>, state: State) {
    Effect::new(move |ended: Option<bool>| {
        if ended == Some(true) {
            return true;
        }
        let ready = state.error.with(Option::is_some)
            || (state.last_good.with(Option::is_some) && state.look_answered.get());
        if ready {
            host.end_drawing();
        }
        ready
    });
}
