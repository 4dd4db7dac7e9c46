// The widget's code, loaded once per page whichever of pickup.js and pickup-element.js asks
// first: each is its own bundle (scripts/site.mjs), and a page may load both, so the loaded
// glue is kept on the global object under the glue's own URL. The build writes the
// content-hashed names into the three marked strings below.
import { SHARE } from "./contract.js";
import { live, notify } from "./share.js";

const GLUE = "./app.js";
const WASM = "app_bg.wasm";
const CSS = "pickup.css";

const here = new URL(".", import.meta.url);
/** The hashed stylesheet's name (the loader's light-DOM link looks for it) and its URL. */
export const cssName = CSS;
export const cssUrl = new URL(CSS, here).href;
const key = Symbol.for(`pickup:${new URL(GLUE, here).href}`);

// The widgets' streams go through share.js (one per browser); the first bundle loaded installs it.
// Added to what another Pickup's bundle (another server, another version) may have installed;
// its notifications only with its streams, whose holders they ask.
const share = (globalThis[Symbol.for(SHARE)] ??= {});
if (!share.live) Object.assign(share, { live, notify });

// First pages asked for ahead of the wasm (early.js), which its download waits for: on a slow
// link the two share the bandwidth, and the 100 KB of wasm would hold back the few KB the viewer
// is waiting for (measured on Fast 3G: the first card came 700 ms later). Shared, as the glue
// is, by every bundle of the page.
const ahead = (globalThis[Symbol.for(`pickup:ahead:${new URL(GLUE, here).href}`)] ??= { pages: new Set(), started: false });
/** The longest the wasm's download waits for the first pages: a page that never comes must not
 *  keep the widget from starting. */
const AHEAD_MS = 3000;

/** Has the wasm's download wait for `page` (settled either way), if it has not started yet. */
export function before(page) {
  if (!ahead.started) ahead.pages.add(page);
}

/** Settles once every page the download waits for has; a page may be added as another settles
 *  (getToken's answer, then the page asked with it). */
async function firstPagesIn() {
  for (let n = 0; n !== ahead.pages.size; ) {
    n = ahead.pages.size;
    await Promise.allSettled(ahead.pages);
  }
}

/** The glue, its wasm started (once per page): resolves to its exports (`mount`). */
export function load() {
  globalThis[key] ??= (async () => {
    // A task later, the elements upgraded as the element was defined have asked for their first
    // pages (each in a microtask); the download starts once those are in.
    await new Promise((r) => setTimeout(r));
    if (ahead.pages.size) await Promise.race([firstPagesIn(), new Promise((r) => setTimeout(r, AHEAD_MS))]);
    ahead.started = true;
    ahead.pages.clear();
    // The wasm's download starts first, beside the glue's: no `<link rel=preload>` for it,
    // which WebKit does not match to this fetch (it fetched the wasm twice).
    const wasm = fetch(new URL(WASM, here));
    // Imported only when asked for, not with a static import, which would hold the caller
    // until the glue had arrived.
    const glue = await import(GLUE);
    await glue.default({ module_or_path: wasm });
    return glue;
  })();
  return globalThis[key];
}
