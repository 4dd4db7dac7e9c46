// Pickup's embed loader (docs/EMBEDDING.md): <pickup-recent> defined, a widget mounted into every
// element with data-pickup-workspace, and mount(element, options) → {unmount(), refresh()}. Its
// name is stable, what it loads content-hashed (scripts/site.mjs writes the names into loader.js,
// bundled in): a browser revalidates only this small file.
import { ATTRIBUTE } from "./contract.js";
import { aheadOf } from "./drawing.js";
import { before, load, cssName, cssUrl } from "./loader.js";
import { PickupRecent } from "./pickup-element.js";
import { mount as mountAhead } from "./early.js";

// The stylesheet for widgets in the page's own DOM (data- attributes, mount()), linked only for
// them: a page with elements alone (which link it in their shadow roots) gets none of its rules.
const linked = `link[data-pickup-css], link[rel="stylesheet"][href$="pickup.css"], link[rel="stylesheet"][href$="${cssName}"]`;
function linkStylesheet() {
  if (document.querySelector(linked)) return;
  const css = Object.assign(document.createElement("link"), { rel: "stylesheet", href: cssUrl });
  css.dataset.pickupCss = "";
  document.head.append(css);
}
const widgets = () => document.querySelectorAll(`[${ATTRIBUTE.workspace}]`);
if (widgets().length) linkStylesheet();
if (!customElements.get("pickup-recent")) customElements.define("pickup-recent", PickupRecent);
// Each widget's first page is asked for, and drawn, now (drawing.js), unless the page's own
// script asked already (the home page); the wasm's download waits for it.
for (const el of widgets()) before(aheadOf(el)?.drawn);
// The glue's init mounts a widget into every [data-pickup-workspace]; not awaited (a module that
// imports this one runs at once). If it fails, no widget takes over a drawing, whose disabled
// buttons and ageing times would stay for good, nor is one that comes later drawn.
load().catch(() => {
  for (const el of widgets()) delete el.pickupPrefetch;
  for (const drawing of document.querySelectorAll(`[${ATTRIBUTE.drawn}]`)) drawing.remove();
});

/** `mount(element, options)` (docs/EMBEDDING.md) answers at once; a mistake in the options is
 *  said on the console when the widget reads them. */
export function mount(element, options) {
  linkStylesheet();
  return mountAhead(element, options ?? {}, (_, cause) => console.error(cause));
}
export { PickupRecent };
