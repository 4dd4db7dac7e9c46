// The home page's head start, inlined into index.html (scripts/site.mjs; the CSP allows it by its
// hash). It signs in from the fragment of the link `make run` prints (never sent to a server; kept
// in this tab's sessionStorage, taken off the address bar), as the element's attributes, and asks
// for the first page, and draws it, before pickup.js has come (on Fast 3G half a second sooner).
import { ATTRIBUTE, FRAGMENT, STORAGE } from "./contract.js";
import { aheadOf } from "./drawing.js";

const el = document.querySelector(`[${ATTRIBUTE.home}]`);
try {
  if (el) {
    signIn(el);
    aheadOf(el);
  }
} catch {
  // Only a head start (sessionStorage may be blocked): the widget asks, and says what failed.
}

/** The fragment's (kept in this tab) or this tab's workspace and token, and its cap and refresh. */
function signIn(el) {
  // As written: a token is never unescaped.
  const pairs = location.hash.replace(/^#+/, "").split("&");
  const param = (k) => pairs.find((p) => p.startsWith(`${k}=`))?.slice(k.length + 1) ?? null;
  const [ws, token] = [param(FRAGMENT.workspace), param(FRAGMENT.token)];
  if (ws !== null && token !== null) {
    sessionStorage.setItem(STORAGE.workspace, ws);
    sessionStorage.setItem(STORAGE.token, token);
    history.replaceState(null, "", location.pathname);
  }
  const set = (name, value) => value && el.setAttribute(name, value);
  set(ATTRIBUTE.workspace, ws ?? sessionStorage.getItem(STORAGE.workspace));
  set(ATTRIBUTE.token, token ?? sessionStorage.getItem(STORAGE.token));
  set(ATTRIBUTE.cap, param(FRAGMENT.cap));
  set(ATTRIBUTE.refresh, param(FRAGMENT.refresh));
}
