// The home page's head start, inlined into index.html by scripts/site.mjs (the site's CSP
// allows it by its hash, which the server reads from index.html). It signs the page in: the
// link `make run` prints carries the workspace and the token in its fragment (`#ws=…&token=…`,
// which browsers never send to a server), kept in this tab's sessionStorage and taken off the
// address bar; they, and the fragment's `cap` and `refresh`, become the element's attributes,
// which the widget reads as any element's (app/src/mount.rs). Then it asks for the first page
// as soon as the HTML is read, not after pickup.js has arrived, and, beside it, for the
// server's drawing of that page (drawing.js). On Fast 3G that is the first card about half a
// second sooner than the wasm can draw it (BENCHMARKS.md). The widget takes over the same
// answer, and the drawing.
import { ATTRIBUTE, FRAGMENT, STORAGE } from "./contract.js";
import { prefetch } from "./prefetch.js";
import { drawAhead } from "./drawing.js";

const el = document.querySelector(`[${ATTRIBUTE.home}]`);
try {
  if (el) signIn(el);
  // pickup.js may have asked first (its order beside this async script is not fixed).
  const asked = el && (el.pickupPrefetch ?? prefetch(el));
  // A host's words or locale are the widget's to apply.
  const plain = el && !el.hasAttribute(ATTRIBUTE.labels) && !el.hasAttribute(ATTRIBUTE.locale);
  // Not drawn over what the widget says when the answer is no page (a token it cannot keep).
  if (asked && plain) drawAhead(el, asked, asked.response);
} catch {
  // Only a head start (sessionStorage may be blocked): the widget asks, and says what failed.
}

/** The fragment's workspace and token (kept in this tab) or this tab's, and its cap and
 *  refresh, as the element's attributes. */
function signIn(el) {
  const pairs = location.hash.replace(/^#+/, "").split("&").filter((p) => p.includes("="));
  const param = (k) => pairs.find((p) => p.slice(0, p.indexOf("=")) === k)?.slice(k.length + 1) ?? null;
  const [ws, token] = [param(FRAGMENT.workspace), param(FRAGMENT.token)];
  if (ws !== null && token !== null) {
    sessionStorage.setItem(STORAGE.workspace, ws);
    sessionStorage.setItem(STORAGE.token, token);
    history.replaceState(null, "", location.pathname);
  }
  const given = {
    [ATTRIBUTE.workspace]: ws ?? sessionStorage.getItem(STORAGE.workspace),
    [ATTRIBUTE.token]: token ?? sessionStorage.getItem(STORAGE.token),
    [ATTRIBUTE.cap]: param(FRAGMENT.cap),
    [ATTRIBUTE.refresh]: param(FRAGMENT.refresh),
  };
  for (const [name, value] of Object.entries(given)) if (value) el.setAttribute(name, value);
}
