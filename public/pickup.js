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
// after it: on a slow network that is one round trip less before the first card. The widget
// takes the answer only if its own first call is this same request (URL, body and token);
// else, or if this one fails, it makes its own. Home page: `ws`, `token` and `cap` from the
// fragment or this tab's sessionStorage, as the widget reads them.
for (const el of document.querySelectorAll("[data-pickup-workspace]")) {
  try {
    prefetch(el);
  } catch {
    // Only a head start (sessionStorage may be blocked): the widget asks, and says what failed.
  }
}
function prefetch(el) {
  const attr = (name) => el.getAttribute(name) || null;
  let [ws, token, cap] = [attr("data-pickup-workspace"), attr("data-pickup-token"), attr("data-pickup-cap")];
  if (el.hasAttribute("data-pickup-home")) {
    const pairs = location.hash.replace(/^#+/, "").split("&").filter((p) => p.includes("="));
    const param = (k) => pairs.find((p) => p.slice(0, p.indexOf("=")) === k)?.slice(k.length + 1) ?? null;
    ws = param("ws") ?? sessionStorage.getItem("pickup.ws");
    token = param("token") ?? sessionStorage.getItem("pickup.token");
    cap = param("cap") ?? cap;
  }
  if (!ws || !token) return;
  const n = cap === null || cap.trim() === "" || !/^[0-9+\-.eE]+$/.test(cap.trim()) ? NaN : Number(cap.trim());
  cap = n >= 0 && n <= 1e9 ? Math.min(50, Math.max(1, Math.round(n))) : 8;
  const url = `${(attr("data-pickup-server") ?? "").replace(/\/+$/, "")}/api/recent`;
  const body = JSON.stringify({ ws, filter: "all", cap, before: null });
  const authorization = `Bearer ${token}`;
  const headers = { "Content-Type": "application/json", Accept: "application/json", Authorization: authorization };
  const response = fetch(url, { method: "POST", headers, body });
  response.catch(() => {}); // the widget asks again
  el.pickupPrefetch = { url, body, authorization, response };
}
// Imported only now, not with a static import, which would hold all of the above until the glue
// had arrived. Its init runs the widget's start function, which mounts into every
// [data-pickup-workspace].
const glue = await import(GLUE);
await glue.default({ module_or_path: new URL(WASM, here) });

export const mount = glue.mount;
