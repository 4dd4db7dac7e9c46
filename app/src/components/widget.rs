//! The widget: a header, then a list of cards. Each mounted widget owns its own signals, its
//! own server and its own token (its [`Host`]), so several can live on one page. Its parts:
//! [`State`] (`widget_state`), [`Calls`] (`widget_fetches`), `widget_upkeep` and [`Body`]
//! (`widget_body`).

use super::frame::Frame;
use super::header::Header;
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
}

#[component]
pub fn Widget(config: WidgetConfig, host: Rc<Host>) -> impl IntoView {
    let state = State::new(config.filter);
    Effect::new(move |_| {
        state.filter.track();
        state.reset_older();
    });
    hand_over_drawing(host.clone(), state);

    let calls = Calls::new(config.ws.clone(), host.clone(), state, config.cap);
    let new_items = config.labels.new_items.clone();
    let stream =
        widget_upkeep::open_stream(&host, &config.ws, config.cap, state, new_items.clone());
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
    };
    let live = move || match state.liveness.get() {
        Liveness::Live => "live",
        Liveness::Polling => "polling",
        Liveness::Connecting => "connecting",
    };
    view! {
        <Frame labels=config.labels.clone() live=live announcement=state.announcement>
            <Header filter=state.filter labels=config.labels.clone() on_refresh=move || state.bump()/>
            <div class="pickup-body">{body.view()}</div>
        </Frame>
    }
}

/// The home page's drawing of the first page stands in for the widget until it has drawn
/// the first page, or an error, itself. Then the effect reads no signal, and is done.
fn hand_over_drawing(host: Rc<Host>, state: State) {
    Effect::new(move |ended: Option<bool>| {
        if ended == Some(true) {
            return true;
        }
        let ready = state.last_good.with(Option::is_some) || state.error.with(Option::is_some);
        if ready {
            host.end_drawing();
        }
        ready
    });
}
