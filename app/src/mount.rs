//! The browser entry points: at load, mount a widget into every element that carries
//! `data-pickup-workspace`; and `mount(element, options)` for hosts that want to do it by hand,
//! which returns `{unmount()}`.
//!
//! The standalone home page's element (`data-pickup-home`) is given its attributes by
//! public/home.js, from the URL fragment (which browsers never send to a server) or this tab's
//! sessionStorage; it has the bell, and its document's title counts what finished.

use crate::client::Prefetched;
use crate::components::{Widget, WidgetConfig};
use crate::contract::element::Notify;
use crate::contract::names::attribute;
use crate::contract::Filter;
use crate::host::Host;
use crate::labels::Labels;
use crate::options::{options, Given};
use leptos::prelude::*;
use std::cell::Cell;
use std::sync::Arc;
use wasm_bindgen::prelude::*;
use web_sys::HtmlElement;

#[wasm_bindgen]
extern "C" {
    /// `Intl.getCanonicalLocales`, which throws on a tag that is not one: caught here, so a host's
    /// typo is a warning, not a dead widget.
    #[wasm_bindgen(js_namespace = Intl, js_name = getCanonicalLocales, catch)]
    fn canonical_locales(tags: &JsValue) -> Result<js_sys::Array, JsValue>;
}

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

/// `mount(element, {workspace, token?, getToken?, server?, cap?, refresh?, labels?, locale?,
/// filter?})`: a token, a `getToken` or both. Returns `{unmount(), refresh()}`. The
/// `<pickup-recent>` element (public/pickup-element.js) mounts through this too.
#[wasm_bindgen]
pub fn mount(element: HtmlElement, options: JsValue) -> Result<JsValue, JsValue> {
    // The element's first page, when a loader asked for it before the wasm was here
    // (public/drawing.js); taken first, as in `mount_from_attributes`.
    let prefetched = Prefetched::take_from(&element);
    let get = |name: &str| {
        js_sys::Reflect::get(&options, &JsValue::from_str(name))
            .ok()
            .filter(|v| !v.is_undefined() && !v.is_null())
    };
    let text = |name: &str| get(name).and_then(|v| v.as_string());
    let given = |name: &str| match get(name) {
        None => Given::Absent,
        Some(v) => match (v.as_f64(), v.as_string()) {
            (Some(n), _) => Given::Number(n),
            (_, Some(s)) => Given::Text(s),
            _ => Given::Other(v.js_typeof().as_string().unwrap_or_default()),
        },
    };
    let ws = text("workspace").ok_or("mount: options.workspace is required")?;
    let get_token = match get("getToken") {
        None => None,
        Some(f) => Some(
            f.dyn_into::<js_sys::Function>()
                .map_err(|_| "mount: options.getToken must be a function")?,
        ),
    };
    let token = text("token").unwrap_or_default();
    if token.is_empty() && get_token.is_none() {
        return Err("mount: options.token or options.getToken is required".into());
    }
    let notify = get("notify").map(|v| (v.as_bool(), v.as_string()));
    let notify = match &notify {
        None => Notify::Absent,
        Some((Some(on), _)) => Notify::Bool(*on),
        Some((_, Some(text))) => Notify::Text(text),
        Some(_) => Notify::Other,
    }
    .is_on();
    let mut warnings = Vec::new();
    let labels = labels(get("labels"), &mut warnings);
    let unmount = mount_widget(
        element,
        Mounting {
            ws,
            token,
            get_token,
            server: text("server"),
            cap: given("cap"),
            refresh: given("refresh"),
            labels,
            locale: text("locale"),
            filter: text("filter"),
            notify,
            exclude: text("exclude"),
            home: false,
            prefetched,
        },
        warnings,
    )?;
    let handle = js_sys::Object::new();
    js_sys::Reflect::set(&handle, &"unmount".into(), &unmount.unmount)?;
    js_sys::Reflect::set(&handle, &"refresh".into(), &unmount.refresh)?;
    Ok(handle.into())
}

/// What a host page gave for one widget, from attributes or `mount()` options.
struct Mounting {
    ws: String,
    token: String,
    get_token: Option<js_sys::Function>,
    server: Option<String>,
    cap: crate::options::Given,
    refresh: crate::options::Given,
    labels: Labels,
    locale: Option<String>,
    /// "all" (the default) or "mine".
    filter: Option<String>,
    /// Shows the bell (the `notify` attribute, present and not "false").
    notify: bool,
    /// An item's id left out (`exclude`).
    exclude: Option<String>,
    /// The standalone home page's widget.
    home: bool,
    /// The first page, asked for before the wasm was here (by the loader, for widgets mounted
    /// at load; by `<pickup-recent>`).
    prefetched: Option<Prefetched>,
}

fn mount_from_attributes(el: HtmlElement) -> Result<(), JsValue> {
    // Taken first, whatever follows: a loader's drawing (public/drawing.js) is made only while it
    // is still on the element, and must not cover a sign-in message written below.
    let prefetched = Prefetched::take_from(&el);
    let attr = |name: &str| el.get_attribute(name).filter(|v| !v.is_empty());
    // The home page's element has its attributes from the link `make run` printed, which
    // public/home.js reads (and keeps in this tab) before anything else runs.
    let home = el.has_attribute(attribute::HOME);
    let (Some(ws), Some(token)) = (attr(attribute::WORKSPACE), attr(attribute::TOKEN)) else {
        if home {
            el.set_inner_html(r#"<p class="pickup-state">Open the link that <code>make run</code> printed: it signs you in.</p>"#);
            return Err("open the link that `make run` printed: it carries #ws=…&token=…".into());
        }
        return Err("data-pickup-workspace is empty, or data-pickup-token is missing".into());
    };
    let mut warnings = Vec::new();
    let labels = match attr(attribute::LABELS) {
        None => Labels::default(),
        Some(json) => match js_sys::JSON::parse(&json) {
            Ok(v) => labels(Some(v), &mut warnings),
            Err(_) => {
                warnings.push("pickup: data-pickup-labels is not JSON: using English".into());
                Labels::default()
            }
        },
    };
    let unmount = mount_widget(
        el.clone(),
        Mounting {
            ws,
            token,
            get_token: None,
            server: attr(attribute::SERVER),
            cap: crate::options::Given::text(attr(attribute::CAP)),
            refresh: crate::options::Given::text(attr(attribute::REFRESH)),
            labels,
            locale: attr(attribute::LOCALE),
            filter: attr(attribute::FILTER),
            // The home page always has its bell.
            notify: home
                || el
                    .get_attribute(attribute::NOTIFY)
                    .is_some_and(|v| Notify::Text(&v).is_on()),
            exclude: attr(attribute::EXCLUDE),
            home,
            prefetched,
        },
        warnings,
    )?;
    // Widgets mounted at load live as long as the page.
    std::mem::forget(unmount);
    Ok(())
}

/// Labels from a JavaScript object of strings (`labels`, or `data-pickup-labels` parsed).
fn labels(given: Option<JsValue>, warnings: &mut Vec<String>) -> Labels {
    let Some(given) = given else {
        return Labels::default();
    };
    if !given.is_object() || given.is_array() {
        warnings.push("pickup: labels must be an object of strings: using English".into());
        return Labels::default();
    }
    let entries = js_sys::Object::entries(given.unchecked_ref());
    let pairs = entries.iter().filter_map(|pair| {
        let pair: js_sys::Array = pair.dyn_into().ok()?;
        Some((pair.get(0).as_string()?, pair.get(1).as_string()))
    });
    Labels::default().with(pairs, warnings)
}

/// `Intl.RelativeTimeFormat` for `locale` (a BCP 47 tag such as "de" or "pt-BR"), or the
/// browser's locale without one or with one that is not a tag (with a warning).
fn relative_times(
    locale: Option<&str>,
    warnings: &mut Vec<String>,
) -> js_sys::Intl::RelativeTimeFormat {
    let locales = match locale.map(|l| canonical_locales(&JsValue::from_str(l))) {
        None => js_sys::Array::new(),
        Some(Ok(tags)) => tags,
        Some(Err(_)) => {
            warnings.push(format!(
                "pickup: locale \"{}\" is not a language tag: using the browser's",
                locale.unwrap_or_default()
            ));
            js_sys::Array::new()
        }
    };
    let options = js_sys::Object::new();
    for (k, v) in crate::relative::TIME_WORDS {
        let _ = js_sys::Reflect::set(&options, &k.into(), &v.into());
    }
    js_sys::Intl::RelativeTimeFormat::new(&locales, &options)
}

thread_local! {
    /// Numbers the widgets of the page, for their element ids.
    static MOUNTED: Cell<u32> = const { Cell::new(0) };
}

/// A mounted widget's two functions for its host.
struct Mounted {
    unmount: JsValue,
    refresh: JsValue,
}

/// Mount one widget.
fn mount_widget(
    el: HtmlElement,
    given: Mounting,
    mut warnings: Vec<String>,
) -> Result<Mounted, JsValue> {
    let options = options(given.cap, given.refresh);
    warnings.extend(options.warnings);
    let filter = match given.filter.as_deref().map(str::trim) {
        None | Some("") => Filter::All,
        Some(given) => Filter::from_wire(given).unwrap_or_else(|| {
            warnings.push(format!(
                "pickup: filter \"{given}\" is neither \"all\" nor \"mine\": using \"all\""
            ));
            Filter::All
        }),
    };
    let times = relative_times(given.locale.as_deref(), &mut warnings);
    for warning in &warnings {
        web_sys::console::warn_1(&JsValue::from_str(warning));
    }
    let n = MOUNTED.with(|m| {
        m.set(m.get() + 1);
        m.get()
    });
    let config = WidgetConfig {
        ws: given.ws,
        cap: options.cap,
        refresh: options.refresh,
        labels: Arc::new(given.labels),
        times,
        id_prefix: format!("pickup{n}"),
        filter,
        notify: given.notify,
        exclude: given.exclude,
        home: given.home,
    };
    // A loader's drawing of the first page (public/drawing.js) stays in front of the widget,
    // which the stylesheet hides meanwhile, until the widget has drawn its own, with its look
    // (`Widget`): the viewer sees no skeleton in between, and nothing moves.
    let drawing = el.query_selector(crate::host::DRAWING).ok().flatten();
    el.set_inner_html("");
    if let Some(drawing) = drawing {
        el.append_child(&drawing)?;
    }
    // One owner per widget: unmount cleans it, which ends the widget's loops and timers.
    let owner = Owner::new();
    let (host, view) = owner.with(|| {
        let host = Host::new(
            el.clone(),
            given.server.unwrap_or_default(),
            given.token,
            given.get_token,
            given.prefetched,
        );
        let widget_host = host.clone();
        let view = leptos::mount::mount_to(el.clone(), move || {
            view! { <Widget config=config host=widget_host/> }
        });
        (host, view)
    });
    observe_token(&el, &host)?;
    let refreshed = std::rc::Rc::downgrade(&host);
    let refresh = Closure::<dyn Fn()>::new(move || {
        if let Some(host) = refreshed.upgrade() {
            host.refresh();
        }
    });
    let mut mounted = Some((view, owner, host));
    let unmount = Closure::<dyn FnMut()>::new(move || {
        if let Some((view, owner, host)) = mounted.take() {
            drop(view);
            owner.cleanup();
            host.unmount();
        }
    });
    Ok(Mounted {
        unmount: unmount.into_js_value(),
        refresh: refresh.into_js_value(),
    })
}

/// A new `data-pickup-token` on the widget's element is its new token, until unmount.
fn observe_token(el: &HtmlElement, host: &std::rc::Rc<Host>) -> Result<(), JsValue> {
    let (seen_by, el_seen) = (std::rc::Rc::downgrade(host), el.clone());
    let on_change = Closure::<dyn Fn()>::new(move || {
        if let (Some(t), Some(host)) = (
            el_seen
                .get_attribute(attribute::TOKEN)
                .filter(|t| !t.is_empty()),
            seen_by.upgrade(),
        ) {
            host.host_gave(t);
        }
    });
    let observer = web_sys::MutationObserver::new(on_change.as_ref().unchecked_ref())?;
    let init = web_sys::MutationObserverInit::new();
    init.set_attributes(true);
    init.set_attribute_filter(&js_sys::Array::of1(&attribute::TOKEN.into()));
    observer.observe_with_options(el, &init)?;
    // The callback lives until unmount disconnects the observer.
    host.on_unmount(move || {
        observer.disconnect();
        drop(on_change);
    });
    Ok(())
}
