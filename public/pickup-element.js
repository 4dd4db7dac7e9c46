// <pickup-recent>, the widget as a custom element (docs/EMBEDDING.md). This module defines nothing
// by itself: pickup.js defines it; a host that wants it under another name, or on its own
// schedule, calls `customElements.define(name, PickupRecent)`. The wasm widget (app/src/mount.rs)
// mounts into its shadow root, which a host's stylesheet reaches only through the --pickup-*
// custom properties and ::part(). Attributes and properties are mount()'s options; events bubble.
import { ATTRIBUTE, DOM_EVENT, ELEMENT_ATTRIBUTES as ATTRIBUTES } from "./contract.js";
import { cssUrl } from "./loader.js";
import { mount } from "./early.js";

export class PickupRecent extends HTMLElement {
  // `token` as an attribute too, for a page of attributes only (the property wins over it).
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
    const css = Object.assign(document.createElement("link"), { rel: "stylesheet", href: cssUrl });
    this.#box = document.createElement("div");
    this.attachShadow({ mode: "open" }).append(css, this.#box);
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
    // A property set before the element was defined sits on the instance, hiding the setter.
    for (const name of [...ATTRIBUTES, "token", "getToken", "labels"]) {
      if (!Object.hasOwn(this, name)) continue;
      const value = this[name];
      delete this[name];
      this[name] = value;
    }
    this.#schedule();
  }
  // Checked a microtask later: an element moved in the page is disconnected and connected again
  // at once, and keeps its widget; one removed frees its stream, timers and renewal.
  disconnectedCallback() {
    this.#schedule();
  }
  attributeChangedCallback(name) {
    if (name === "token") this.#tokenChanged();
    else this.#schedule();
  }

  #currentToken() {
    return this.#token || this.getAttribute("token") || "";
  }

  // A mounted widget takes a new token at once, from its box's data-pickup-token.
  #tokenChanged() {
    const token = this.#currentToken();
    if (this.#handle && token) this.#box.setAttribute(ATTRIBUTE.token, token);
    else this.#schedule();
  }

  /** `el.refresh()` asks for the cards now; `el.refresh = 30` (React and Vue set the attribute,
   *  the seconds between polls, as a property) sets the attribute, and the method stays. */
  get refresh() {
    return () => this.#handle?.refresh();
  }
  set refresh(seconds) {
    if (seconds == null) this.removeAttribute("refresh");
    else this.setAttribute("refresh", String(seconds));
  }

  /** Mounts (again) once after properties set in a row (as React and Vue set them). */
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
    // A new box: nothing of an earlier run's (its token, its first page, drawn late) is this one's.
    const box = document.createElement("div");
    this.#box.replaceWith(box);
    this.#box = box;
    // Waits for what it needs: connected, a workspace, and a token or a getToken.
    if (!this.isConnected || !options) return;
    this.#handle = mount(this.#box, options, (message, cause) => {
      console.error(`pickup: ${message}`, cause);
      const detail = { code: "transport", message };
      this.dispatchEvent(new CustomEvent(DOM_EVENT.error, { bubbles: true, composed: true, detail }));
    });
    this.#mountedWith = given;
  }

  #options() {
    const [workspace, token] = [this.getAttribute("workspace"), this.#currentToken()];
    if (!workspace || (!token && !this.#getToken)) return null;
    const options = { workspace, token: token || undefined };
    for (const name of ATTRIBUTES.slice(1)) options[name] = this.getAttribute(name) ?? undefined;
    // Through the element: a new one (a framework's per render) needs no mounting again.
    if (this.#getToken) options.getToken = () => this.#getToken();
    if (this.#labels) options.labels = this.#labels;
    return options;
  }
}

// Properties for the attributes, reflected (React 19 and Vue set properties where an element has
// them); `notify` a boolean, by the widget's rule (Notify::is_on; app/tests/cases/notify.json).
export const notifyOn = (value) => value != null && value !== false && value !== "false";
for (const name of ATTRIBUTES.filter((a) => a !== "refresh")) {
  const notify = name === "notify";
  Object.defineProperty(PickupRecent.prototype, name, {
    get() {
      const value = this.getAttribute(name);
      return notify ? notifyOn(value) : value;
    },
    set(value) {
      if (notify) this.toggleAttribute(name, notifyOn(value));
      else if (value == null) this.removeAttribute(name);
      else this.setAttribute(name, String(value));
    },
    configurable: true,
  });
}
