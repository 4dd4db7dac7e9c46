// Pickup's embed loader. A page that loads this module gets the <pickup-recent> element
// (pickup-element.js) defined, a widget mounted into every element with data-pickup-workspace,
// and can call mount(element, options) itself, which returns {unmount(), refresh()} (options
// and events: docs/EMBEDDING.md).
//
//   <pickup-recent workspace="acme" server="https://pickup.example.com"></pickup-recent>
//   <script type="module" src="https://pickup.example.com/pickup.js"></script>
//
// This file's name is stable; the glue, the wasm and the stylesheet it loads are content-hashed
// (assets/…-<hash>.…). The build (scripts/site.mjs) writes their names into loader.js and
// bundles it in, so a browser revalidates only this small file and keeps the rest.
import { ATTRIBUTE } from "./contract.js";
import { prefetch } from "./prefetch.js";
import { load, cssName, cssUrl } from "./loader.js";
import { PickupRecent } from "./pickup-element.js";
import { mount as mountAhead } from "./early.js";

// The stylesheet for widgets in the page's own DOM (data- attributes, mount()), linked only
// for them: the element links it in its shadow root, and a page with elements alone gets none
// of the widget's rules in its own DOM.
const linked = `link[data-pickup-css], link[rel="stylesheet"][href$="pickup.css"], link[rel="stylesheet"][href$="${cssName}"]`;
function linkStylesheet() {
  if (document.querySelector(linked)) return;
  const css = document.createElement("link");
  css.rel = "stylesheet";
  css.href = cssUrl;
  css.dataset.pickupCss = "";
  document.head.appendChild(css);
}
if (document.querySelector(`[${ATTRIBUTE.workspace}]`)) linkStylesheet();
if (!customElements.get("pickup-recent")) customElements.define("pickup-recent", PickupRecent);
// Each widget's first page of cards is asked for now, beside the wasm's download rather than
// after it (prefetch.js), unless the page's own inline script asked already (the home page).
for (const el of document.querySelectorAll(`[${ATTRIBUTE.workspace}]`)) if (!el.pickupPrefetch) prefetch(el);
// The glue's init runs the widget's start function, which mounts into every
// [data-pickup-workspace]. Not awaited here: a module that imports this one runs at once, and
// the wasm loads behind it (no top-level await holds the host).
const glue = load();
glue.catch(() => {
  // No widget will take over the home page's drawing (home.js): its disabled buttons and
  // ageing times would stay for good. Nor is one that comes later drawn.
  for (const el of document.querySelectorAll(`[${ATTRIBUTE.workspace}]`)) delete el.pickupPrefetch;
  for (const drawing of document.querySelectorAll(`[${ATTRIBUTE.drawn}]`)) drawing.remove();
});

/** `mount(element, options)`: docs/EMBEDDING.md. It answers at once; a mistake in the options is
 *  said on the console when the widget reads them. */
export function mount(element, options) {
  linkStylesheet();
  return mountAhead(element, options ?? {}, (_, cause) => console.error(cause));
}
export { PickupRecent };
