//! The live route: the viewer's page as server-sent events.

use super::extract::{bearer, recent_query, views, RecentQuery, RecentQueryResult, View};
use super::state::AppState;
use crate::auth::{Authorized, Read};
use crate::error::Error;
use crate::live::{Event, Frame, Recheck, Rechecks};
use app::contract::names::route;
use app::contract::{ApiError, Filter, LiveEvent, ViewPage};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::sse;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::time::Duration;

/// How often a stream sends a comment when it has nothing to say, so that proxies between the
/// server and the browser do not close it as idle.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// `GET /api/v1/workspaces/{ws}/live`: the viewer's page as server-sent events, read with
/// `fetch` (the token travels in `Authorization`, never in the URL). Refusals (401, 403, 400)
/// come before the stream, as JSON errors like every route's.
#[utoipa::path(
    get,
    path = route::LIVE,
    tag = "recent",
    summary = "The caller's page as server-sent events",
    description = "`event: page` (data: a RecentPage; with `views`, a RecentPage with its \
                   `filter` and `cap` beside the cards) at once and whenever it changes; \
                   `event: unavailable` (data: an ApiError) while the store does not answer; \
                   then one closing event, `unauthenticated` or `reconnect`. Refusals come \
                   before the stream, as JSON.",
    params(("ws" = String, Path, description = "The workspace"), RecentQuery),
    responses(
        (status = 200, description = "The stream", content_type = "text/event-stream", body = String),
        (status = 400, description = "`invalid_name` or `invalid_body` (the query; `before` is refused)", body = ApiError),
        (status = 401, description = "`unauthenticated`", body = ApiError),
        (status = 403, description = "`forbidden`", body = ApiError),
        (status = 501, description = "`not_supported`: this server serves no live streams (`PICKUP_LIVE_EVERY=0s`)", body = ApiError),
        (status = 503, description = "`busy` (poll instead: the server's streams, or this workspace's or viewer's share, are all open) or `store_unavailable`", body = ApiError),
    ),
)]
pub(super) async fn live(
    State(s): State<AppState>,
    who: Authorized<Read>,
    headers: HeaderMap,
    q: RecentQueryResult,
) -> Result<Response, Error> {
    use axum::response::sse::{KeepAlive, Sse};
    use futures::StreamExt;
    let wanted = wanted(recent_query(q)?)?;
    let asked: Vec<_> = wanted
        .iter()
        .map(|&(_, cap, filter)| (filter, cap))
        .collect();
    let (subs, expires_at) = s.pickup.subscribe(&who, &asked)?;
    let subs = wanted.into_iter().map(|(view, _, _)| view).zip(subs);
    let rechecks = rechecks(&s, &who, &headers);
    let frames = futures::stream::select_all(subs.map(|(view, sub)| {
        sub.frames(expires_at, rechecks.clone())
            .map(move |frame| (view, frame))
            .boxed()
    }));
    // The first closing frame, of any of the pages, closes the stream.
    let frames = frames.scan(false, |closed, (view, frame)| {
        let was_closed = *closed;
        *closed |= !matches!(frame, Frame::Event(_));
        std::future::ready((!was_closed).then_some((view, frame)))
    });
    let events = frames.map(|(view, frame)| Ok::<_, std::convert::Infallible>(event(view, frame)));
    let mut res = Sse::new(events)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response();
    // Proxies that buffer responses (nginx) pass this one through as it comes.
    res.headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(res)
}

/// One page a stream asks for: the view that names it in its events (with `views`), its cap
/// (if given) and its filter.
type Wanted = (Option<View>, Option<u32>, Filter);

/// The pages a stream's query asks for: one (`filter` and `cap`), or several (`views`), each
/// its own subscription; a page of `views` is named in its events.
fn wanted(q: RecentQuery) -> Result<Vec<Wanted>, Error> {
    if q.before.is_some() {
        return Err(Error::MalformedBody(
            "a live stream sends the first page: drop before (GET /recent pages with it)".into(),
        ));
    }
    Ok(match &q.views {
        None => vec![(None, q.cap, q.filter)],
        Some(_) if q.cap.is_some() => {
            return Err(Error::MalformedBody(
                "give views, or filter and cap, not both".into(),
            ))
        }
        Some(list) => views(list)?
            .into_iter()
            .map(|(f, cap)| (Some((f, cap)), Some(cap), f))
            .collect(),
    })
}

/// The stream lasts while what allowed it holds: the token's key is still in the identity
/// provider's set (after its refreshes), the caller still a member; `exp` is checked too.
fn rechecks(s: &AppState, who: &Authorized<Read>, headers: &HeaderMap) -> Rechecks {
    let (auth, token, ws) = (
        s.pickup.auth().clone(),
        bearer(headers),
        who.ws().to_string(),
    );
    let keys = auth.key_set_changes();
    let check: Recheck = Arc::new(move || {
        let (auth, token, ws) = (auth.clone(), token.clone(), ws.clone());
        Box::pin(async move { auth.authorize::<Read>(token.as_deref(), &ws).await.is_ok() })
    });
    Rechecks { check, keys }
}

/// One frame of a page's subscription, as the event the stream sends.
fn event(view: Option<View>, frame: Frame) -> sse::Event {
    let event = match frame {
        Frame::Event(Event::Page(page)) => match view {
            None => sse::Event::default()
                .event(LiveEvent::Page.as_str())
                .json_data(page),
            Some((filter, cap)) => sse::Event::default()
                .event(LiveEvent::Page.as_str())
                .json_data(ViewPage { filter, cap, page }),
        },
        Frame::Event(Event::Unavailable) => {
            let e = ApiError::new(
                app::contract::ErrorCode::StoreUnavailable,
                "the object store did not answer; the last page stands, and this stream retries",
            );
            sse::Event::default()
                .event(LiveEvent::Unavailable.as_str())
                .json_data(e)
        }
        Frame::Unauthenticated => {
            let e = ApiError::from(Error::Unauthenticated(
                "the token expired or no longer holds (its key was withdrawn, or the workspace is no longer granted); get a new one".into(),
            ));
            sse::Event::default()
                .event(LiveEvent::Unauthenticated.as_str())
                .json_data(e)
        }
        Frame::Reconnect => Ok(sse::Event::default()
            .event(LiveEvent::Reconnect.as_str())
            .data("{}")),
    };
    event.expect("a page serialises")
}
