// The home page's head start, inlined into index.html by scripts/site.mjs (the site's CSP
// allows it by its hash, which the server reads from index.html). It asks for the first page as
// soon as the HTML is read, not after pickup.js has arrived, and, beside it, for the server's
// drawing of that page (drawing.js). On Fast 3G that is the first card about half a second
// sooner than the wasm can draw it (BENCHMARKS.md). The widget takes over the same answer, and
// the drawing.
import { ATTRIBUTE } from "./contract.js";
import { prefetch } from "./prefetch.js";
import { drawing } from "./drawing.js";

const el = document.querySelector(`[${ATTRIBUTE.home}]`);
try {
  // pickup.js may have asked first (its order beside this async script is not fixed).
  const asked = el && (el.pickupPrefetch ?? prefetch(el));
  // A host's words or locale are the widget's to apply.
  const plain = el && !el.hasAttribute(ATTRIBUTE.labels) && !el.hasAttribute(ATTRIBUTE.locale);
  if (asked && plain) draw(el, asked).catch(() => {});
} catch {
  // Only a head start (sessionStorage may be blocked): the widget asks, and says what failed.
}

async function draw(el, asked) {
  const [drawn, answer] = await Promise.all([drawing(asked), asked.response]);
  // Not once the widget has taken the answer (it deletes `pickupPrefetch`): it draws, or says
  // what failed (a token it could not keep), and a drawing would stand over that.
  if (drawn && answer.ok && el.pickupPrefetch === asked) el.replaceChildren(drawn);
}
