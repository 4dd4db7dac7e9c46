// A widget's first page before the wasm (for home.js, pickup.js, early.js): GET …/drawing answers
// the page, the viewer's last look, and their drawing by the widget's own components
// (app/src/components/drawing.rs), to which the browser adds the times in the viewer's words. The
// widget takes page and look as its first calls' answers (app/src/client.rs), and the drawing's
// place once it has drawn.
import { ATTRIBUTE, DATE_WORDS, DEFAULT_CAP, FILTER, TIME_WORDS, drawingPath } from "./contract.js";

/** Asks for `options`' first page, left on `box` as `pickupPrefetch` (`answer`: its status and
 *  parsed body), and draws it there unless the widget took it first or has a host's words to
 *  apply (`drawn` settles then). Null without a workspace and a token, or with an exclude. */
export function ahead(box, { workspace, token, server, cap, filter, labels, locale, exclude }) {
  if (!workspace || !token || exclude) return null;
  const url = `${(server ?? "").replace(/\/+$/, "")}${drawingPath(workspace)}?${drawingQuery({ cap, filter })}`;
  const authorization = `Bearer ${token}`;
  const read = async (res) => ({ status: res.status, body: await res.json().catch(() => null) });
  const answer = fetch(url, { headers: { Authorization: authorization } }).then(read);
  const asked = (box.pickupPrefetch = { url, authorization, answer });
  asked.drawn = answer
    .then(({ status, body }) => {
      const drawn = status === 200 && !labels && !locale && box.pickupPrefetch === asked && drawing(body?.html);
      if (drawn) box.replaceChildren(drawn);
    })
    .catch(() => {}); // the widget asks again, and says what failed
  return asked;
}

/** The drawing's query: the cap and filter as written, which the server judges; the widget takes
 *  the answer only if it asks the same (app/src/client.rs; app/tests/cases/options.json). */
export const drawingQuery = ({ cap = DEFAULT_CAP, filter = FILTER.all }) => new URLSearchParams({ filter, cap });

/** `ahead()` for a widget of data-pickup-* attributes, unless asked already. */
export function aheadOf(el) {
  const names = ["workspace", "token", "server", "cap", "filter", "labels", "locale", "exclude"];
  const options = Object.fromEntries(names.map((n) => [n, el.getAttribute(ATTRIBUTE[n]) || undefined]));
  return el.pickupPrefetch ?? ahead(el, options);
}

/** The server's drawing, buttons disabled and times in the viewer's words; null if none. */
function drawing(html) {
  if (typeof html !== "string") return null;
  const template = document.createElement("template");
  template.innerHTML = html;
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
    // For a screen reader, after the time: ", " and the date and time.
    t.nextElementSibling?.append(full);
  }
  return drawn;
}
