// A widget's first request, made by a loader before the wasm has arrived: on a slow network
// that is one round trip less before the first card. Bundled into pickup.js, and into the
// home page's inline script (home.js), by scripts/site.mjs.
//
// The widget takes the answer only if its own first call is this same request (URL, body and
// token); else, or if this one fails, it makes its own. So this computes the request exactly as
// the widget does: home page: `ws`, `token` and `cap` from the fragment or this tab's
// sessionStorage; else from the element's attributes; the cap rule of `options.rs`. The rule's
// numbers, the URL and the body come from contract.js, which app/src/contract/ writes.
import { ATTRIBUTE, DEFAULT_CAP, FRAGMENT, MAX_CAP, MIN_CAP, NONSENSE_ABOVE, RECENT_PATH, STORAGE, firstPageBody } from "./contract.js";

/** Starts `el`'s first request and leaves it on the element as `pickupPrefetch`; returns it,
 *  or null when the widget could not ask either (no workspace or token). May throw (blocked
 *  sessionStorage): the caller goes on, and the widget says what failed. */
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
  if (!ws || !token) return null;
  const asked = firstRequest({ server: attr(ATTRIBUTE.server), ws, token, cap });
  const headers = { "Content-Type": "application/json", Accept: "application/json", Authorization: asked.authorization };
  const response = fetch(asked.url, { method: "POST", headers, body: asked.body });
  response.catch(() => {}); // the widget asks again
  return (el.pickupPrefetch = { ...asked, response });
}

/** A widget's first `recent` request as the widget makes it: its URL, body and authorization,
 *  and what it asks for: the workspace, the cap (the rule of options.rs) and the filter. */
export function firstRequest({ server, ws, token, cap, filter = "all" }) {
  const n = cap == null || cap.trim() === "" || !/^[0-9+\-.eE]+$/.test(cap.trim()) ? NaN : Number(cap.trim());
  cap = n >= 0 && n <= NONSENSE_ABOVE ? Math.min(MAX_CAP, Math.max(MIN_CAP, Math.round(n))) : DEFAULT_CAP;
  server = (server ?? "").replace(/\/+$/, "");
  return { url: `${server}${RECENT_PATH}`, body: firstPageBody(ws, cap, filter), authorization: `Bearer ${token}`, server, cap, ws, filter };
}
