//! A server-fn client that adds `Authorization: Bearer <token>` to every call, so the token
//! never appears in a URL. The token comes from the mounted widget's context, so two widgets on
//! one page can act for two different viewers.

use crate::api::BearerToken;
use leptos::prelude::use_context;
use leptos::server_fn::client::{browser::BrowserClient, Client};
use leptos::server_fn::error::FromServerFnError;
use leptos::server_fn::request::browser::BrowserRequest;
use leptos::server_fn::response::browser::BrowserResponse;
use std::future::Future;

pub struct AuthClient;

impl<E, IS, OS> Client<E, IS, OS> for AuthClient
where
    E: FromServerFnError,
    IS: FromServerFnError,
    OS: FromServerFnError,
{
    type Request = BrowserRequest;
    type Response = BrowserResponse;

    fn send(req: Self::Request) -> impl Future<Output = Result<Self::Response, E>> + Send {
        if let Some(BearerToken(token)) = use_context::<BearerToken>() {
            req.headers()
                .append("Authorization", &format!("Bearer {token}"));
        }
        <BrowserClient as Client<E, IS, OS>>::send(req)
    }

    #[allow(clippy::type_complexity)]
    fn open_websocket(
        path: &str,
    ) -> impl Future<
        Output = Result<
            (
                impl futures::Stream<Item = Result<bytes::Bytes, bytes::Bytes>> + Send + 'static,
                impl futures::Sink<bytes::Bytes> + Send + 'static,
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
