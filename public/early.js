// <pickup-recent>'s and mount()'s head start: the first page asked for, and drawn, before the
// wasm has arrived (on a host page that is a download and a start-up the card need not wait
// for). The page comes from the browser's shared live stream (share.js): the page's widgets,
// whatever their caps and filters, and those of the browser's other tabs, ask the server once
// between them. If the stream cannot be had (refused, or a server without streams), the widget's
// first `recent` call is made instead.
//
// The widget takes the answer as its own first call's (app/src/client.rs: the same URL, body
// and token), and keeps the drawing in front of itself until it has drawn its own. The drawing
// is the server's, asked for beside the page (drawing.js).
import { ATTRIBUTE, FILTER, LIVE_EVENT, SHARE as SHARE_KEY } from "./contract.js";
import { firstRequest } from "./prefetch.js";
import { drawAhead } from "./drawing.js";
import { before, load } from "./loader.js";

const SHARE = Symbol.for(SHARE_KEY);
const FILTERS = Object.values(FILTER);

/** `mount(element, options)` for <pickup-recent> and pickup.js (docs/EMBEDDING.md): the widget
 *  mounts as soon as the wasm is in (at once when it is), its first page asked for (and drawn)
 *  meanwhile; `refresh()` before then waits for it. A new `data-pickup-token` on `element`
 *  meanwhile is the token it mounts with, as it is a mounted widget's new token. What fails to
 *  load or start is `failed(message, cause)`'s to say. */
export function mount(element, options, failed) {
  let widget = null;
  let unmounted = false;
  // (With getToken it is asked for once the token is in, unless the widget is there by then.)
  const first = ahead(element, options, () => !unmounted && !widget);
  // Nor is a first page drawn, or left drawn, for a widget that will not come.
  const undo = () => {
    first.end.then((end) => end?.());
    delete element.pickupPrefetch;
    element.querySelector(`:scope > [${ATTRIBUTE.drawn}]`)?.remove();
  };
  const mounted = load().then(
    (glue) => {
      if (unmounted) return;
      try {
        widget = glue.mount(element, { ...first.options, token: element.getAttribute(ATTRIBUTE.token) ?? first.options.token });
      } catch (e) {
        failed(typeof e === "string" ? e : "the widget could not start", e);
      }
      // Kept until the widget's own stream has joined the shared one (it opens as the widget
      // starts, in this task's microtasks), so the shared stream is not closed and opened again.
      first.end.then((end) => end && setTimeout(end));
    },
    (e) => {
      undo();
      failed("the widget's code could not be loaded", e);
    },
  );
  return {
    unmount() {
      unmounted = true;
      if (!widget) undo();
      widget?.unmount();
      widget = null;
    },
    refresh() {
      if (widget) widget.refresh();
      else mounted.then(() => widget?.refresh());
    },
  };
}

/** Asks for the first page of the widget `options` describe, to be mounted into `box`; leaves
 *  the request on `box` as `pickupPrefetch`, and draws the page there when it comes first.
 *  Returns what ends the early subscription (call it once the widget has its own stream, which
 *  then keeps the shared one open), or null when there is nothing to ask ahead (no token yet, a
 *  host's labels or locale, an item left out, a cap the widget is to judge). */
export function early(box, { workspace, token, server, cap, filter = FILTER.all, labels, locale, exclude }) {
  if (!token || labels || locale || exclude || !FILTERS.includes(filter) || !globalThis[SHARE]) return null;
  const asked = firstRequest({ server, ws: workspace, token, cap, filter });
  if (!asked) return null; // a cap the widget is to judge
  const stop = new AbortController();
  const view = { server: asked.server, ws: workspace, filter, cap: asked.cap, authorization: asked.authorization, signal: stop.signal };
  const viaStream = Promise.race([firstPage(view), patience()]);
  const response = viaStream.catch(() => fetch(asked.url, { method: "POST", headers: asked.headers, body: asked.body }));
  box.pickupPrefetch = { url: asked.url, body: asked.body, authorization: asked.authorization, response };
  // Drawn as soon as it is in: the server drew it for this token, so the page is this viewer's,
  // and it needs no other answer (the page by the stream waits for the shared stream's check of
  // the token, one round trip more).
  before(drawAhead(box, asked));
  // Ended once the first page is in (or given up on): ended sooner, the page would be asked
  // for again.
  return () => viaStream.catch(() => {}).finally(() => stop.abort());
}

/** `early()` for any widget's options: with `getToken` and no `token`, `getToken` is called now,
 *  not once the wasm is in, and the first page asked for with its answer while `wanted()` still
 *  says so. Returns the options the widget is to be given (its own first call of `getToken` gets
 *  that same answer) and a promise of what `early()` returned. */
export function ahead(box, options, wanted) {
  if (options.token || typeof options.getToken !== "function") return { options, end: Promise.resolve(early(box, options)) };
  const asked = askedOnce(options.getToken);
  before(asked.token);
  // Before the wasm's wait on the token settles: the page asked with it is waited for too.
  const end = asked.token.then(
    (token) => (wanted() ? early(box, { ...options, token }) : null),
    () => null, // the widget's first call gets the same failure, and says it
  );
  return { options: { ...options, getToken: asked.getToken }, end };
}

/** `getToken` called now: its answer (`token`, a promise), and a getToken whose first call
 *  answers with that same promise and whose later calls call `getToken` again. */
function askedOnce(getToken) {
  const token = (async () => getToken())();
  let given = false;
  return {
    token,
    getToken: () => {
      if (given) return getToken();
      given = true;
      return token;
    },
  };
}

/** How long the first page may take by the stream before `recent` is asked instead: long
 *  enough for a slow network's round trips, and a bound on a shared stream whose holder tab is
 *  still trying to open it. */
const PATIENCE_MS = 5000;
const patience = () => new Promise((_, reject) => setTimeout(() => reject(new Error("no page yet")), PATIENCE_MS));

/** The first page of the live stream of `view`, as the answer of a `recent` call (the widget
 *  cuts it to its cap, as it does the stream's pages); the stream stays open (one subscription
 *  of the shared stream) until `view.signal` ends it. */
async function firstPage(view) {
  const feed = await globalThis[SHARE].live(view);
  if (feed.status !== 200) throw new Error(`the stream answered ${feed.status}`);
  const events = feed.events.getReader();
  for (let read; !(read = await events.read()).done; ) {
    const { name, data } = read.value;
    if (!name) continue; // a keep-alive
    if (name !== LIVE_EVENT.page || !data) throw new Error(`the stream said ${name}`);
    return new Response(JSON.stringify(data), { status: 200, headers: { "Content-Type": "application/json" } });
  }
  throw new Error("the stream ended");
}
