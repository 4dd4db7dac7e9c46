// <pickup-recent>: the widget as a custom element. This module defines nothing by itself (no
// side effect on import): pickup.js defines it as `pickup-recent`; a host that wants it under
// another name, or on its own schedule, calls `customElements.define(name, PickupRecent)`.
//
//   <pickup-recent workspace="acme" server="https://pickup.example.com"></pickup-recent>
//   el.getToken = async () => (await fetch("/pickup-token")).text();
//
// The element mounts the wasm widget (app/src/mount.rs, the same `mount()` the data- attributes
// use) into its shadow root, so a host's stylesheet reaches it only through the --pickup-*
// custom properties and ::part() (style/pickup.css). Attributes and properties map to mount()'s
// options one to one; docs/EMBEDDING.md, lists them. Its pickup:* events are composed,
// so they reach the element and bubble on from it.
import { ATTRIBUTE, DOM_EVENT, ELEMENT_ATTRIBUTES as ATTRIBUTES } from "./contract.js";
import { cssUrl } from "./loader.js";
import { mount } from "./early.js";

export class PickupRecent extends HTMLElement {
  // `token` as an attribute too, for a page that sets nothing but attributes (server-rendered);
  // the property wins over it.
  static observedAttributes = [...ATTRIBUTES, "token"];
  #token = "";
  #getToken = null;
  #labels = null;
  #box;
  #handle = null;
  /** What the mounted widget was given (everything but the token, which it takes live). */
  #mountedWith = null;
  #syncing = false;

  constructor() {
    super();
    const root = this.attachShadow({ mode: "open" });
    const css = document.createElement("link");
    css.rel = "stylesheet";
    css.href = cssUrl;
    this.#box = document.createElement("div");
    root.append(css, this.#box);
  }

  get token() {
    return this.#token;
  }
  set token(token) {
    this.#token = token == null ? "" : String(token);
    this.#tokenChanged();
  }
  get getToken() {
    return this.#getToken;
  }
  set getToken(fn) {
    this.#getToken = typeof fn === "function" ? fn : null;
    this.#schedule();
  }
  get labels() {
    return this.#labels;
  }
  set labels(labels) {
    this.#labels = labels ?? null;
    this.#schedule();
  }

  connectedCallback() {
    // A property a framework set before the element was defined sits on the instance, hiding
    // the class's setter: taken over now.
    for (const name of [...ATTRIBUTES, "token", "getToken", "labels"]) {
      if (Object.hasOwn(this, name)) {
        const value = this[name];
        delete this[name];
        this[name] = value;
      }
    }
    this.#schedule();
  }
  disconnectedCallback() {
    // Checked a microtask later: an element moved in the page is disconnected and connected
    // again at once, and keeps its widget; one removed frees its stream, timers and renewal.
    this.#schedule();
  }
  attributeChangedCallback(name) {
    if (name === "token") this.#tokenChanged();
    else this.#schedule();
  }

  #currentToken() {
    return this.#token || this.getAttribute("token") || "";
  }

  #tokenChanged() {
    // A widget takes a new token at once (its element's data-pickup-token is observed once it
    // is mounted, and read as it mounts), without being mounted again.
    const token = this.#currentToken();
    if (this.#handle && token) this.#box.setAttribute(ATTRIBUTE.token, token);
    else this.#schedule();
  }

  /** `el.refresh()` asks the server for the cards now. The attribute of the same name is the
   *  seconds between polls, and React and Vue set it as a property: `el.refresh = 30` sets
   *  the attribute, and the method stays. */
  get refresh() {
    return () => this.#handle?.refresh();
  }
  set refresh(seconds) {
    if (seconds == null) this.removeAttribute("refresh");
    else this.setAttribute("refresh", String(seconds));
  }

  /** Properties are set one at a time (React and Vue set several in a row): the widget is
   *  mounted, or mounted again, once after all of them. */
  #schedule() {
    if (this.#syncing) return;
    this.#syncing = true;
    queueMicrotask(() => {
      this.#syncing = false;
      this.#sync();
    });
  }

  #sync() {
    const options = this.#options();
    const given = options && JSON.stringify({ ...options, getToken: !!options.getToken, token: undefined });
    if (this.#handle && this.isConnected && given === this.#mountedWith) return;
    this.#handle?.unmount();
    this.#handle = this.#mountedWith = null;
    this.#box.replaceChildren();
    this.#box.removeAttribute(ATTRIBUTE.token);
    // An earlier run's first page is not this one's to draw (a late drawing would fill a box
    // no widget takes over).
    delete this.#box.pickupPrefetch;
    // Waits for what it needs: connected, a workspace, and a token or a getToken.
    if (!this.isConnected || !options) return;
    this.#handle = mount(this.#box, options, (message, cause) => this.#fail(message, cause));
    this.#mountedWith = given;
  }

  #options() {
    const attr = (name) => this.getAttribute(name) ?? undefined;
    const workspace = attr("workspace");
    const token = this.#currentToken();
    if (!workspace || (!token && !this.#getToken)) return null;
    const options = { workspace, token: token || undefined };
    for (const name of ATTRIBUTES.slice(1)) options[name] = attr(name);
    // Called through the element, so a host may give a new function at any time (a framework
    // makes one per render) without the widget being mounted again.
    if (this.#getToken) options.getToken = () => this.#getToken();
    if (this.#labels) options.labels = this.#labels;
    return options;
  }

  #fail(message, cause) {
    console.error(`pickup: ${message}`, cause);
    const detail = { code: "transport", message };
    this.dispatchEvent(new CustomEvent(DOM_EVENT.error, { bubbles: true, composed: true, detail }));
  }
}

// Properties for the attributes, reflected: React 19 and Vue set properties when the element
// has them, and a property set before the element is defined is taken over when it upgrades.
for (const name of ATTRIBUTES.filter((a) => a !== "refresh" && a !== "notify")) {
  Object.defineProperty(PickupRecent.prototype, name, {
    get() {
      return this.getAttribute(name);
    },
    set(value) {
      if (value == null) this.removeAttribute(name);
      else this.setAttribute(name, String(value));
    },
    configurable: true,
  });
}

// `notify` is a boolean attribute, by the widget's rule (Notify::is_on in
// app/src/contract/element.rs; app/tests/cases/notify.json holds the cases both answer alike):
// present (and not "false") shows the bell.
export const notifyOn = (value) => value != null && value !== false && value !== "false";
Object.defineProperty(PickupRecent.prototype, "notify", {
  get() {
    return notifyOn(this.getAttribute("notify"));
  },
  set(value) {
    this.toggleAttribute("notify", notifyOn(value));
  },
  configurable: true,
});

