// The home page's head start, inlined into index.html by scripts/site.mjs (the site's CSP
// allows it by its hash, which the server reads from index.html). It asks for the first page as
// soon as the HTML is read, not after pickup.js has arrived, and draws that page as the widget
// will draw it. On Fast 3G that is the first card about half a second sooner than the wasm can
// draw it (BENCHMARKS.md). The widget takes over the same answer, and the drawing (draw.js).
import { ATTRIBUTE } from "./contract.js";
import { prefetch } from "./prefetch.js";
import { drawing } from "./draw.js";

const el = document.querySelector(`[${ATTRIBUTE.home}]`);
try {
  // pickup.js may have asked first (its order beside this async script is not fixed).
  const asked = el && (el.pickupPrefetch ?? prefetch(el));
  // A host's words or locale are the widget's to apply.
  const plain = el && !el.hasAttribute(ATTRIBUTE.labels) && !el.hasAttribute(ATTRIBUTE.locale);
  if (asked && plain) asked.response.then((r) => draw(el, asked, r)).catch(() => {});
} catch {
  // Only a head start (sessionStorage may be blocked): the widget asks, and says what failed.
}

async function draw(el, asked, response) {
  // Taken by the widget already (it deletes `pickupPrefetch`): it draws, and reads the body.
  if (!response.ok || el.pickupPrefetch !== asked) return;
  const drawn = drawing(await response.clone().json());
  if (el.pickupPrefetch === asked && drawn) el.replaceChildren(drawn);
}
