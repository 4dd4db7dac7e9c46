// Pickup's embed loader. A page that loads this module gets a widget mounted into every element
// with data-pickup-workspace, and can call mount(element, options) itself, which returns
// {unmount()} (options and events: README.md, "Embedding").
//
//   <div data-pickup-workspace="acme" data-pickup-server="https://pickup.example.com"
//        data-pickup-token="…"></div>
//   <script type="module" src="https://pickup.example.com/pickup.js"></script>
//
// This file's name is stable; the glue, the wasm and the stylesheet it loads are content-hashed
// (assets/…-<hash>.…). The build (scripts/site.mjs) writes their names into the three
// marked strings below, so a browser revalidates only this small file and keeps the rest.
import { prefetch } from "./prefetch.js";

const GLUE = "./app.js";
const WASM = "app_bg.wasm";
const CSS = "pickup.css";

const here = new URL(".", import.meta.url);
const linked = `link[data-pickup-css], link[rel="stylesheet"][href$="pickup.css"], link[rel="stylesheet"][href$="${CSS}"]`;
if (!document.querySelector(linked)) {
  const css = document.createElement("link");
  css.rel = "stylesheet";
  css.href = new URL(CSS, here).href;
  css.dataset.pickupCss = "";
  document.head.appendChild(css);
}
// Each widget's first page of cards is asked for now, beside the wasm's download rather than
// after it (prefetch.js), unless the page's own inline script asked already (the home page).
for (const el of document.querySelectorAll("[data-pickup-workspace]")) {
  try {
    if (!el.pickupPrefetch) prefetch(el);
  } catch {
    // Only a head start (sessionStorage may be blocked): the widget asks, and says what failed.
  }
}
// Imported only now, not with a static import, which would hold all of the above until the glue
// had arrived. Its init runs the widget's start function, which mounts into every
// [data-pickup-workspace].
let glue;
try {
  glue = await import(GLUE);
  await glue.default({ module_or_path: new URL(WASM, here) });
} catch (e) {
  // No widget will take over the home page's drawing (home.js): its disabled buttons and
  // ageing times would stay for good.
  for (const drawing of document.querySelectorAll("[data-pickup-drawn]")) drawing.remove();
  throw e;
}

export const mount = glue.mount;
