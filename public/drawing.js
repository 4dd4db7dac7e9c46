// A widget's first page drawn before the wasm has arrived: by the home page's inline script
// (home.js) and by <pickup-recent> (early.js). The server draws it with the widget's own
// components (app/src/components/drawing.rs), so it is the widget's markup, labels and links;
// the browser adds only what the server cannot know: each time in the viewer's words (the
// server leaves the unit and count in `data-ago`, and the words' options are the widget's,
// from contract.js), and that the buttons answer nothing yet (they are disabled). The widget keeps the drawing in front of itself until it has drawn its
// own page, then removes it (app/src/mount.rs). A widget with a host's labels or locale is not
// drawn ahead. end2end/tests/first-card.spec.ts fails when the two differ.
import { DATE_WORDS, TIME_WORDS, drawingPath } from "./contract.js";

/** Draws the first page `asked` stands for (firstRequest in prefetch.js) into `box`, once it is
 *  in and `answer` (the page's own, when given) is a good one, unless the widget has taken the
 *  request meanwhile (it deletes `pickupPrefetch`: it draws, or says what failed). Settles
 *  either way. */
export function drawAhead(box, asked, answer = Promise.resolve({ ok: true })) {
  const prefetched = box.pickupPrefetch;
  return Promise.all([drawing(asked), answer])
    .then(([drawn, res]) => drawn && res.ok && box.pickupPrefetch === prefetched && box.replaceChildren(drawn))
    .catch(() => {}); // the widget asks again, and says what failed
}

/** The drawing of the first page `asked` stands for (firstRequest in prefetch.js), or null when
 *  there is nothing to draw (no cards, or no answer). */
export async function drawing(asked) {
  const url = `${asked.server}${drawingPath(asked.ws)}?filter=${asked.filter}&cap=${asked.cap}`;
  const res = await fetch(url, { headers: { Authorization: asked.authorization, Accept: "text/html" } });
  if (res.status !== 200 || !res.headers.get("Content-Type")?.startsWith("text/html")) {
    res.body?.cancel().catch(() => {}); // unread, it would keep its connection
    return null;
  }
  const template = document.createElement("template");
  template.innerHTML = await res.text();
  const drawn = template.content.firstElementChild;
  if (!drawn) return null;
  for (const b of drawn.querySelectorAll("button")) b.disabled = true;
  const times = new Intl.RelativeTimeFormat([], TIME_WORDS);
  const dates = new Intl.DateTimeFormat([times.resolvedOptions().locale], DATE_WORDS);
  for (const t of drawn.querySelectorAll("time[data-ago]")) {
    const [n, unit] = t.dataset.ago.split(" ");
    const at = Date.parse(t.dateTime);
    const full = Number.isNaN(at) ? t.dateTime : dates.format(at);
    t.textContent = times.format(Number(n), unit);
    t.title = full;
    // The card's words for a screen reader, after the time: ", " and the date and time.
    t.nextElementSibling?.append(full);
  }
  return drawn;
}
