// A widget's first request, made by a loader before the wasm has arrived: on a slow network
// that is one round trip less before the first card. Bundled into pickup.js, and into the
// home page's inline script (home.js), by scripts/site.mjs.
//
// The widget takes the answer only if its own first call is this same request (URL, body and
// token, from the element's attributes); else, or if this one fails, it makes its own. The cap
// is the widget's to judge (Cap::of_number): only one written plainly, a whole number in range
// or none, is asked for ahead (app/tests/cases/options.json holds the cases both agree on); any
// other the widget asks for itself. The range, the URL, the headers and the body come from
// contract.js, which app/src/contract/ writes.
import { ATTRIBUTE, CALL_HEADERS, DEFAULT_CAP, FILTER, MAX_CAP, MIN_CAP, SERVER_FN, firstPageBody } from "./contract.js";

/** Starts `el`'s first request and leaves it on the element as `pickupPrefetch`; returns it,
 *  or null when the widget could not ask either (no workspace or token) or its cap is not
 *  written plainly. */
export function prefetch(el) {
  const attr = (name) => el.getAttribute(name) || null;
  const [ws, token] = [attr(ATTRIBUTE.workspace), attr(ATTRIBUTE.token)];
  const asked = ws && token && firstRequest({ server: attr(ATTRIBUTE.server), ws, token, cap: attr(ATTRIBUTE.cap) });
  if (!asked) return null;
  const response = fetch(asked.url, { method: "POST", headers: asked.headers, body: asked.body });
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
  const authorization = `Bearer ${token}`;
  const headers = { ...CALL_HEADERS, Authorization: authorization };
  return { url: `${server}${SERVER_FN.recent}`, body: firstPageBody(ws, cap, filter), authorization, headers, server, cap, ws, filter };
}

/** The cap a host wrote, when the widget's rule would take it as it is: none (the default), or
 *  a whole number in MIN_CAP..MAX_CAP; else null, and the widget judges it. */
export function plainCap(cap) {
  if (cap == null || String(cap).trim() === "") return DEFAULT_CAP;
  const n = typeof cap === "number" ? cap : /^\d+$/.test(cap.trim()) ? Number(cap.trim()) : NaN;
  return Number.isInteger(n) && n >= MIN_CAP && n <= MAX_CAP ? n : null;
}
