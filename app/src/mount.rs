//! The browser entry points: at load, mount a widget into every element that carries
//! `data-pickup-workspace`; and `mount(element, options)` for hosts that want to do it by hand.
//!
//! The standalone home page (an element with `data-pickup-home`) takes `ws` and `token` from the
//! URL fragment, which browsers never send to a server, and keeps them in sessionStorage.

use crate::components::{Widget, WidgetConfig};
use crate::options::{options, Given};
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use web_sys::HtmlElement;

#[wasm_bindgen(start)]
pub fn start() {
    let Ok(nodes) = document().query_selector_all("[data-pickup-workspace]") else {
        return;
    };
    for i in 0..nodes.length() {
        if let Some(el) = nodes.item(i).and_then(|n| n.dyn_into::<HtmlElement>().ok()) {
            if let Err(e) = mount_from_attributes(el) {
                web_sys::console::error_1(&e);
            }
        }
    }
}

/// `mount(element, {workspace, token, server?, cap?, refresh?})`.
#[wasm_bindgen]
pub fn mount(element: HtmlElement, options: JsValue) -> Result<(), JsValue> {
    let get = |name: &str| js_sys::Reflect::get(&options, &JsValue::from_str(name)).ok();
    let text = |name: &str| get(name).and_then(|v| v.as_string());
    let given = |name: &str| match get(name) {
        None => Given::Absent,
        Some(v) if v.is_undefined() || v.is_null() => Given::Absent,
        Some(v) => match (v.as_f64(), v.as_string()) {
            (Some(n), _) => Given::Number(n),
            (_, Some(s)) => Given::Text(s),
            _ => Given::Other(v.js_typeof().as_string().unwrap_or_default()),
        },
    };
    let ws = text("workspace").ok_or("mount: options.workspace is required")?;
    let token = text("token").ok_or("mount: options.token is required")?;
    mount_widget(
        element,
        ws,
        token,
        text("server"),
        given("cap"),
        given("refresh"),
    )
}

fn mount_from_attributes(el: HtmlElement) -> Result<(), JsValue> {
    let attr = |name: &str| el.get_attribute(name).filter(|v| !v.is_empty());
    let server = attr("data-pickup-server");
    let (mut cap, mut refresh) = (attr("data-pickup-cap"), attr("data-pickup-refresh"));
    let (ws, token) = if el.has_attribute("data-pickup-home") {
        let fragment = fragment();
        let param = |k: &str| {
            fragment
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        };
        cap = param("cap").or(cap);
        refresh = param("refresh").or(refresh);
        match home_credentials(&fragment) {
            Ok(found) => found,
            Err(e) => {
                el.set_inner_html(r#"<p class="pickup-state">Open the link that <code>make run</code> printed: it signs you in.</p>"#);
                return Err(e);
            }
        }
    } else {
        let ws = attr("data-pickup-workspace").ok_or("data-pickup-workspace is empty")?;
        let token = attr("data-pickup-token").ok_or("data-pickup-token is missing")?;
        (ws, token)
    };
    mount_widget(
        el,
        ws,
        token,
        server,
        Given::text(cap),
        Given::text(refresh),
    )
}

fn mount_widget(
    el: HtmlElement,
    ws: String,
    token: String,
    server: Option<String>,
    cap: Given,
    refresh: Given,
) -> Result<(), JsValue> {
    if let Some(server) = server {
        // The server-fn client has one base URL per page; the first widget that names one sets it.
        let base: &'static str =
            Box::leak(server.trim_end_matches('/').to_string().into_boxed_str());
        let _ = leptos::server_fn::client::try_set_server_url(base);
    }
    let options = options(cap, refresh);
    for warning in &options.warnings {
        web_sys::console::warn_1(&JsValue::from_str(warning));
    }
    let (cap, refresh) = (options.cap, options.refresh);
    let config = WidgetConfig {
        ws,
        token,
        cap,
        refresh,
    };
    el.set_inner_html("");
    leptos::mount::mount_to(el, move || view! { <Widget config=config.clone()/> }).forget();
    Ok(())
}

/// The URL fragment's `key=value` pairs.
fn fragment() -> Vec<(String, String)> {
    let hash = window().location().hash().unwrap_or_default();
    hash.trim_start_matches('#')
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `#ws=acme&token=…` in the fragment wins (and is then removed from the address bar); else what
/// this tab stored before.
fn home_credentials(fragment: &[(String, String)]) -> Result<(String, String), JsValue> {
    let window = window();
    let storage = window
        .session_storage()?
        .ok_or("sessionStorage is not available")?;
    let get = |k: &str| {
        fragment
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    let (ws, token) = (get("ws"), get("token"));
    if let (Some(ws), Some(token)) = (&ws, &token) {
        storage.set_item("pickup.ws", ws)?;
        storage.set_item("pickup.token", token)?;
        let history = window.history()?;
        let clean = window.location().pathname()?;
        history.replace_state_with_url(&JsValue::NULL, "", Some(&clean))?;
    }
    let ws = ws.or(storage.get_item("pickup.ws")?);
    let token = token.or(storage.get_item("pickup.token")?);
    match (ws, token) {
        (Some(ws), Some(token)) => Ok((ws, token)),
        _ => Err("open the link that `make run` printed: it carries #ws=…&token=…".into()),
    }
}
