// <pickup-recent>'s head start: its first page asked for, and drawn, before the wasm has arrived
// (on a host page that is a download and a start-up the card need not wait for). The page comes
// from the browser's shared live stream (share.js): the element's widgets, whatever their caps
// and filters, and those of the browser's other tabs, ask the server once between them. If the
// stream cannot be had (refused, or a server without streams), the element asks `recent` itself.
//
// The widget takes the answer as its own first call's (app/src/client.rs: the same URL, body
// and token), and keeps the drawing in front of itself until it has drawn its own. The drawing
// is the server's, asked for beside the page (drawing.js).
import { FILTER, LIVE_EVENT, SHARE as SHARE_KEY, livePath } from "./contract.js";
import { firstRequest } from "./prefetch.js";
import { drawing } from "./drawing.js";
import { before } from "./loader.js";

const SHARE = Symbol.for(SHARE_KEY);
const FILTERS = Object.values(FILTER);

/** Asks for the first page of the widget `options` describe, to be mounted into `box`; leaves
 *  the request on `box` as `pickupPrefetch`, and draws the page there when it comes first.
 *  Returns what ends the early subscription (call it once the widget has its own stream, which
 *  then keeps the shared one open), or null when there is nothing to ask ahead (no token yet, a
 *  host's labels or locale, a cap the widget is to judge). */
export function early(box, { workspace, token, server, cap, filter = FILTER.all, labels, locale }) {
  if (!token || labels || locale || !FILTERS.includes(filter) || !globalThis[SHARE]) return null;
  const asked = firstRequest({ server, ws: workspace, token, cap, filter });
  if (!asked) return null; // a cap the widget is to judge
  const stop = new AbortController();
  const live = `${asked.server}${livePath(workspace)}?filter=${filter}&cap=${asked.cap}`;
  const viaStream = Promise.race([firstPage(live, asked.authorization, stop.signal), patience()]);
  const response = viaStream.catch(() =>
    fetch(asked.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json", Authorization: asked.authorization },
      body: asked.body,
    }),
  );
  const prefetched = (box.pickupPrefetch = { url: asked.url, body: asked.body, authorization: asked.authorization, response });
  // Drawn as soon as it is in: the server drew it for this token, so the page is this viewer's,
  // and it needs no other answer (the page by the stream waits for the shared stream's check of
  // the token, one round trip more).
  const drawn = drawing(asked)
    .then((drawn) => {
      // Taken by the widget already (it deletes `pickupPrefetch`): it draws.
      if (drawn && box.pickupPrefetch === prefetched) box.replaceChildren(drawn);
    })
    .catch(() => {}); // the widget asks again, and says what failed
  before(drawn);
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

/** The first page of a live stream, as the answer of a `recent` call; the stream stays open
 *  (one subscription of the shared stream) until `signal` ends it. */
async function firstPage(url, authorization, signal) {
  const feed = await globalThis[SHARE].live(url, { headers: { Authorization: authorization }, signal });
  if (feed.status !== 200) throw new Error(`the stream answered ${feed.status}`);
  for (let event; (event = await feed.next()); ) {
    if (!event.name) continue; // a keep-alive
    if (event.name !== LIVE_EVENT.page || !event.data) throw new Error(`the stream said ${event.name}`);
    return new Response(JSON.stringify(event.data), { status: 200, headers: { "Content-Type": "application/json" } });
  }
  throw new Error("the stream ended");
}
