//! A server-fn client for one widget: its calls go to the widget's own server, with
//! `Authorization: Bearer <token>` (so the token never appears in a URL). Both come from the
//! mounted widget's context ([`Endpoint`]), so widgets of several servers and several viewers
//! can share one page: server_fn's own base URL is one per page, and is never set.

use leptos::prelude::{use_context, GetUntracked, RwSignal};
use leptos::server_fn::client::{browser::BrowserClient, Client};
use leptos::server_fn::error::FromServerFnError;
use leptos::server_fn::request::browser::{BrowserFormData, BrowserRequest};
use leptos::server_fn::request::ClientReq;
use leptos::server_fn::response::browser::BrowserResponse;
use leptos::server_fn::Bytes;
use std::future::Future;
use std::sync::Arc;

/// Where a widget's calls go and the token they carry, provided as context by each widget.
#[derive(Clone)]
pub struct Endpoint {
    /// The server's origin, without a trailing slash; empty for this page's own.
    pub server: Arc<str>,
    /// The current token: renewed through the host's `getToken`, or a new `data-pickup-token`.
    pub token: RwSignal<String>,
}

pub struct AuthClient;

/// A request to the widget's own server: `BrowserRequest`, with the path under the server
/// of the widget's [`Endpoint`].
pub struct WidgetRequest(BrowserRequest);

fn at(path: &str) -> String {
    match use_context::<Endpoint>() {
        Some(e) => format!("{}{path}", e.server),
        None => path.to_string(),
    }
}

impl<E: FromServerFnError> ClientReq<E> for WidgetRequest {
    type FormData = BrowserFormData;

    fn try_new_req_query(
        path: &str,
        content_type: &str,
        accepts: &str,
        query: &str,
        method: http::Method,
    ) -> Result<Self, E> {
        BrowserRequest::try_new_req_query(&at(path), content_type, accepts, query, method).map(Self)
    }

    fn try_new_req_text(
        path: &str,
        content_type: &str,
        accepts: &str,
        body: String,
        method: http::Method,
    ) -> Result<Self, E> {
        BrowserRequest::try_new_req_text(&at(path), content_type, accepts, body, method).map(Self)
    }

    fn try_new_req_bytes(
        path: &str,
        content_type: &str,
        accepts: &str,
        body: Bytes,
        method: http::Method,
    ) -> Result<Self, E> {
        BrowserRequest::try_new_req_bytes(&at(path), content_type, accepts, body, method).map(Self)
    }

    fn try_new_req_form_data(
        path: &str,
        accepts: &str,
        content_type: &str,
        body: Self::FormData,
        method: http::Method,
    ) -> Result<Self, E> {
        BrowserRequest::try_new_req_form_data(&at(path), accepts, content_type, body, method)
            .map(Self)
    }

    fn try_new_req_multipart(
        path: &str,
        accepts: &str,
        body: Self::FormData,
        method: http::Method,
    ) -> Result<Self, E> {
        BrowserRequest::try_new_req_multipart(&at(path), accepts, body, method).map(Self)
    }

    fn try_new_req_streaming(
        path: &str,
        accepts: &str,
        content_type: &str,
        body: impl futures::Stream<Item = Bytes> + Send + 'static,
        method: http::Method,
    ) -> Result<Self, E> {
        BrowserRequest::try_new_req_streaming(&at(path), accepts, content_type, body, method)
            .map(Self)
    }
}

impl<E, IS, OS> Client<E, IS, OS> for AuthClient
where
    E: FromServerFnError,
    IS: FromServerFnError,
    OS: FromServerFnError,
{
    type Request = WidgetRequest;
    type Response = BrowserResponse;

    fn send(req: Self::Request) -> impl Future<Output = Result<Self::Response, E>> + Send {
        if let Some(token) = use_context::<Endpoint>().and_then(|e| e.token.try_get_untracked()) {
            req.0
                .headers()
                .append("Authorization", &format!("Bearer {token}"));
        }
        <BrowserClient as Client<E, IS, OS>>::send(req.0)
    }

    #[allow(clippy::type_complexity)]
    fn open_websocket(
        path: &str,
    ) -> impl Future<
        Output = Result<
            (
                impl futures::Stream<Item = Result<Bytes, Bytes>> + Send + 'static,
                impl futures::Sink<Bytes> + Send + 'static,
            ),
            E,
        >,
    > + Send {
        <BrowserClient as Client<E, IS, OS>>::open_websocket(path)
    }

    fn spawn(future: impl Future<Output = ()> + Send + 'static) {
        <BrowserClient as Client<E, IS, OS>>::spawn(future)
    }
}
