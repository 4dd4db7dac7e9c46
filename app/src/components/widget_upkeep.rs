//! What keeps a widget's cards current: the stream, polling while it is not up, fetching again
//! when the page is shown or the token changes, and stopping it all when the widget unmounts.

use super::widget_fetches::report;
use super::widget_state::State;
use crate::components::live;
use crate::components::stream::{self, Handle, Liveness};
use crate::host::Host;
use leptos::prelude::*;
use std::rc::Rc;
use std::time::Duration;

/// Follow the server's stream of the first page of `view`; each page goes to [`State::accept`],
/// with `new_items`.
pub fn open_stream(host: &Rc<Host>, view: stream::View, state: State, new_items: String) -> Handle {
    let from_stream = move |page| {
        state.stream_pages.update_value(|n| *n += 1);
        state.accept(page, &new_items);
    };
    let failed = {
        let host = host.clone();
        move |e| report(&host, state, e)
    };
    stream::follow(
        host.clone(),
        view,
        state.filter,
        state.liveness,
        from_stream,
        failed,
    )
}

/// Fetch every `refresh` (longer while failing) while the `stream` is not up, on the host's
/// `refresh()`, when the page is shown again and when the token changes; close the stream while
/// the page is hidden, and all of it when the widget unmounts.
pub fn keep_current(host: &Rc<Host>, refresh: Duration, state: State, stream: Handle) {
    let bump = move || state.bump();
    let poll = move || {
        if state.liveness.get_untracked() != Liveness::Live {
            bump();
        }
    };
    live::refresh_loop(refresh, state.failures, poll);
    host.set_refresher(bump);
    let hide = stream.clone();
    let stop_listening = live::on_visibility(move |shown| {
        if shown {
            bump();
        } else if hide.dozing() {
            // Hidden: close the stream; it reopens, and catches up, when the page is shown.
            hide.retune(None);
        }
    });
    live::keep_time_current(state.now);
    // A new token (renewed, or a new `data-pickup-token`): schedule its renewal and fetch with
    // it. A stream reopens with it when the server ends the old token's stream at its expiry.
    let (token, renewals) = (host.endpoint.token, host.clone());
    Effect::new(move |first: Option<()>| {
        token.track();
        renewals.schedule_renewal();
        if first.is_some() {
            bump();
        }
    });
    host.on_unmount(move || {
        stop_listening();
        stream.retune(None);
    });
}
