// The widget's code, loaded once per page, kept on the global object under the glue's URL:
// pickup.js and pickup-element.js are bundles of their own (scripts/site.mjs, which writes the
// content-hashed names into the three marked strings below), and a page may load both.
import { SHARE } from "./contract.js";
import { live, notify } from "./share.js";

const GLUE = "./app.js";
const WASM = "app_bg.wasm";
const CSS = "pickup.css";

const here = new URL(".", import.meta.url);
/** The hashed stylesheet's name (the loader's light-DOM link looks for it) and its URL. */
export const cssName = CSS;
export const cssUrl = new URL(CSS, here).href;
const glueUrl = new URL(GLUE, here).href;
const key = Symbol.for(`pickup:${glueUrl}`);

// The widgets' streams go through share.js, installed by the first bundle loaded (another
// Pickup's, of another server or version, keeps its own notify, which asks its own streams).
const share = (globalThis[Symbol.for(SHARE)] ??= {});
if (!share.live) Object.assign(share, { live, notify });

// The first pages asked for ahead (drawing.js), which the wasm's download waits for (at most
// AHEAD_MS): on Fast 3G its 100 KB held the first card back 700 ms. Shared by the page's bundles.
const ahead = (globalThis[Symbol.for(`pickup:ahead:${glueUrl}`)] ??= { pages: new Set(), started: false });
const AHEAD_MS = 3000;

/** Has the wasm's download wait for `page` (a promise, settled either way), if it has not started. */
export function before(page) {
  if (page && !ahead.started) ahead.pages.add(page);
}

/** The glue, its wasm started (once per page): resolves to its exports (`mount`). */
export function load() {
  globalThis[key] ??= (async () => {
    // A task later, the page's widgets (elements upgrade in microtasks) have asked ahead.
    await new Promise((r) => setTimeout(r));
    if (ahead.pages.size) await Promise.race([Promise.allSettled(ahead.pages), new Promise((r) => setTimeout(r, AHEAD_MS))]);
    ahead.started = true;
    ahead.pages.clear();
    // The wasm's download starts first, beside the glue's: no `<link rel=preload>` for it,
    // which WebKit does not match to this fetch (it fetched the wasm twice).
    const wasm = fetch(new URL(WASM, here));
    // Imported only when asked for: a static import would hold the caller until the glue came.
    const glue = await import(GLUE);
    await glue.default({ module_or_path: wasm });
    return glue;
  })();
  return globalThis[key];
}
