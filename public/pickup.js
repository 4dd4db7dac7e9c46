// Pickup's embed loader. A page that loads this module gets a widget mounted into every element
// with data-pickup-workspace, and can call mount(element, options) itself, which returns
// {unmount()} (options and events: README.md, "Embedding").
//
//   <div data-pickup-workspace="acme" data-pickup-server="https://pickup.example.com"
//        data-pickup-token="…"></div>
//   <script type="module" src="https://pickup.example.com/pickup.js"></script>
import init, { mount } from "./app.js";

const here = new URL(".", import.meta.url);
if (!document.querySelector('link[data-pickup-css], link[rel="stylesheet"][href$="pickup.css"]')) {
  const css = document.createElement("link");
  css.rel = "stylesheet";
  css.href = new URL("pickup.css", here).href;
  css.dataset.pickupCss = "";
  document.head.appendChild(css);
}
// Runs the widget's start function, which mounts into every [data-pickup-workspace].
await init({ module_or_path: new URL("app_bg.wasm", here) });

export { mount };
