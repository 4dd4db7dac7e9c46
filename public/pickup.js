// Pickup's embed loader. A page that loads this module gets a widget mounted into every element
// with data-pickup-workspace, and can call mount(element, options) itself, which returns
// {unmount()} (options and events: README.md, "Embedding").
//
//   <div data-pickup-workspace="acme" data-pickup-server="https://pickup.example.com"
//        data-pickup-token="…"></div>
//   <script type="module" src="https://pickup.example.com/pickup.js"></script>
//
// This file's name is stable; the glue, the wasm and the stylesheet it loads are content-hashed
// (assets/…-<hash>.…). The build (scripts/finish-dist.mjs) writes their names into the three
// marked strings below, so a browser revalidates only this small file and keeps the rest.
import init, { mount } from "./app.js";
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
// Runs the widget's start function, which mounts into every [data-pickup-workspace].
await init({ module_or_path: new URL(WASM, here) });

export { mount };
