//! Pickup's stand-in for `wasm-streams`. Leptos 0.8 always turns on server_fn's `browser`
//! feature, whose streaming client links wasm-streams; the widget never uses that client (it
//! calls its server functions with the browser's `fetch`, app/src/client.rs), yet the real
//! crate's `#[wasm_bindgen]` classes stayed in the wasm, kept alive through the function table
//! wasm-bindgen exports (about 3 KB gzipped). This keeps only the four conversions server_fn's
//! code names, so it compiles; none of them can run in Pickup, and they panic if called.

use futures_util::Stream;
use wasm_bindgen::JsValue;

const UNUSED: &str = "Pickup's wasm-streams stand-in: server_fn's streaming client is not used";

/// A JavaScript `ReadableStream`, as server_fn's streaming requests and responses name it.
pub struct ReadableStream(web_sys::ReadableStream);

impl ReadableStream {
    pub fn from_raw(raw: web_sys::ReadableStream) -> Self {
        Self(raw)
    }

    pub fn into_raw(self) -> web_sys::ReadableStream {
        self.0
    }

    pub fn from_stream<St>(_stream: St) -> Self
    where
        St: Stream<Item = Result<JsValue, JsValue>> + 'static,
    {
        panic!("{UNUSED}")
    }

    pub fn into_stream(self) -> futures_util::stream::Empty<Result<JsValue, JsValue>> {
        panic!("{UNUSED}")
    }
}
