// A widget's first request, made by a loader before the wasm has arrived: on a slow network
// that is one round trip less before the first card. Bundled into pickup.js, and into the
// home page's inline script (home.js), by scripts/site.mjs.
//
// The widget takes the answer only if its own first call is this same request (URL, body and
// token); else, or if this one fails, it makes its own. So this computes the request exactly as
// the widget does: home page: `ws`, `token` and `cap` from the fragment or this tab's
// sessionStorage; else from the element's attributes. The cap is the widget's to judge
// (options.rs): only one written plainly, a whole number in range or none, is asked for ahead;
// any other the widget asks for itself. The range, the URL and the body come from contract.js,
// which app/src/contract/ writes.
import { ATTRIBUTE, DEFAULT_CAP, FILTER, FRAGMENT, MAX_CAP, MIN_CAP, RECENT_PATH, STORAGE, firstPageBody } from "./contract.js";

/** Starts `el`'s first request and leaves it on the element as `pickupPrefetch`; returns it,
 *  or null when the widget could not ask either (no workspace or token) or its cap is not
 *  written plainly. May throw (blocked sessionStorage): the caller goes on, and the widget
 *  says what failed. */
export function prefetch(el) {
  const attr = (name) => el.getAttribute(name) || null;
  let [ws, token, cap] = [attr(ATTRIBUTE.workspace), attr(ATTRIBUTE.token), attr(ATTRIBUTE.cap)];
  if (el.hasAttribute(ATTRIBUTE.home)) {
    const pairs = location.hash.replace(/^#+/, "").split("&").filter((p) => p.includes("="));
    const param = (k) => pairs.find((p) => p.slice(0, p.indexOf("=")) === k)?.slice(k.length + 1) ?? null;
    ws = param(FRAGMENT.workspace) ?? sessionStorage.getItem(STORAGE.workspace);
    token = param(FRAGMENT.token) ?? sessionStorage.getItem(STORAGE.token);
    cap = param(FRAGMENT.cap) ?? cap;
  }
  const asked = ws && token && firstRequest({ server: attr(ATTRIBUTE.server), ws, token, cap });
  if (!asked) return null;
  const headers = { "Content-Type": "application/json", Accept: "application/json", Authorization: asked.authorization };
  const response = fetch(asked.url, { method: "POST", headers, body: asked.body });
  response.catch(() => {}); // the widget asks again
  return (el.pickupPrefetch = { ...asked, response });
}

/** A widget's first `recent` request as the widget makes it: its URL, body and authorization,
 *  and what it asks for: the workspace, the cap and the filter; null when the cap is not written
 *  plainly. */
export function firstRequest({ server, ws, token, cap, filter = FILTER.all }) {
  cap = plainCap(cap);
  if (cap === null) return null;
  server = (server ?? "").replace(/\/+$/, "");
  return { url: `${server}${RECENT_PATH}`, body: firstPageBody(ws, cap, filter), authorization: `Bearer ${token}`, server, cap, ws, filter };
}

/** The cap a host wrote, when the widget's rule (options.rs) would take it as it is: none (the
 *  default), or a whole number in MIN_CAP..MAX_CAP; else null, and the widget judges it. */
function plainCap(cap) {
  if (cap == null || String(cap).trim() === "") return DEFAULT_CAP;
  const n = typeof cap === "number" ? cap : /^\d+$/.test(cap.trim()) ? Number(cap.trim()) : NaN;
  return Number.isInteger(n) && n >= MIN_CAP && n <= MAX_CAP ? n : null;
}
