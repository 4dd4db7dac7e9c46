// A drawing of a widget's first page, made before the wasm has arrived: by the home page's
// inline script (home.js) and by <pickup-recent> (early.js). The widget keeps it in front of
// itself until it has drawn its own page, then removes it (app/src/mount.rs); until then the
// drawing's buttons are disabled, since nothing would answer them.
//
// The markup is the widget's (app/src/components), with its English labels and the browser's
// locale: a widget with a host's labels or locale is not drawn ahead.
// end2end/tests/first-card.spec.ts fails when the two differ.
import { ATTRIBUTE, CARD_FIELDS, OWNER_FIELDS, PAGE_FIELDS, STATUSES } from "./contract.js";
import { safeHref } from "./safe-link.js";

/** The drawing of `page`, or null when there is nothing to draw (no cards, or a page the
 *  widget would refuse). */
export function drawing(page, filter = "all") {
  return readable(page) && page.cards.length > 0 ? widget(page, filter === "mine") : null;
}

/** Whether the widget can read `page` (app/src/decode.rs, whole or nothing): else it shows an
 *  error, and a drawing of the page would show what it refuses. */
function readable(page) {
  // The field lists are contract.js's (the Rust model's): "?" may be null or missing.
  const typed = (v, type) => (type === "array" ? Array.isArray(v) : type === "object" ? v !== null && typeof v === "object" : typeof v === type);
  const fits = (o, fields) =>
    o !== null && typeof o === "object" &&
    Object.entries(fields).every(([n, t]) => (t.endsWith("?") ? o[n] === null || o[n] === undefined || typed(o[n], t.slice(0, -1)) : typed(o[n], t)));
  return fits(page, PAGE_FIELDS) && page.cards.every((c) => fits(c, CARD_FIELDS) && fits(c.owner, OWNER_FIELDS));
}

/** An element: attributes, then children (text is appended as text, never parsed). */
function h(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null) e.setAttribute(k, v);
  e.append(...children.filter((c) => c !== null));
  return e;
}
const button = (attrs, text) => h("button", { type: "button", ...attrs, disabled: "" }, text);
// `fill` of labels.rs; a function, so that `$&` in a title is not a replacement pattern.
const fill = (template, title) => template.replace("{title}", () => title);

function widget(page, mine) {
  const title = "Pick up where you left off";
  return h(
    "section",
    { class: "pickup", "aria-label": title, "data-live": "connecting", [ATTRIBUTE.drawn]: "" },
    h(
      "header",
      { class: "pickup-header", part: "header" },
      h("h2", { class: "pickup-title", tabindex: "-1" }, title),
      h(
        "div",
        { class: "pickup-controls", role: "group", "aria-label": "Whose items" },
        button({ class: "pickup-toggle", part: "toggle", "aria-pressed": String(mine) }, "Mine"),
        button({ class: "pickup-toggle", part: "toggle", "aria-pressed": String(!mine) }, "Everyone"),
      ),
      button({ class: "pickup-refresh", "aria-label": "Refresh" }, "↻"),
    ),
    h(
      "div",
      { class: "pickup-body" },
      h("ul", { class: "pickup-list", "aria-label": "Recent items" }, ...page.cards.map(card)),
      page.more ? button({ class: "pickup-more" }, "Show older") : null,
      page.partial ? h("p", { class: "pickup-note" }, "Some items could not be read just now.") : null,
    ),
    h("p", { class: "pickup-visually-hidden", "aria-live": "polite", role: "status" }),
  );
}

const times = new Intl.RelativeTimeFormat([], { numeric: "auto", style: "short" });

/** components/card.rs. */
function card(c) {
  const badge = c.stalled ? "stalled" : STATUSES.includes(c.status) ? c.status : "unknown";
  const id = `pickup1-${c.id}`;
  const when = c.finished_at ?? c.updated_at;
  const href = safeHref(c.url);
  const title = href
    ? h("a", { class: "pickup-card-title", part: "title", id, href }, c.title)
    : h("span", { class: "pickup-card-title", part: "title", id }, c.title);
  let progress = null;
  if (typeof c.progress === "number") {
    const pct = Math.round(Math.min(1, Math.max(0, c.progress)) * 100);
    const fillBar = h("div", { class: "pickup-progress-fill" });
    fillBar.style.width = `${pct}%`; // the CSSOM: the CSP allows no style attribute
    progress = h(
      "div",
      { class: "pickup-progress", part: "progress", role: "progressbar", "aria-label": fill("Progress of {title}", c.title), "aria-valuemin": "0", "aria-valuemax": "100", "aria-valuenow": String(pct) },
      fillBar,
    );
  }
  return h(
    "li",
    { class: "pickup-card", part: "card", "data-status": badge, "data-id": c.id, "aria-labelledby": id },
    h("div", { class: "pickup-card-top" }, title, h("span", { class: `pickup-badge pickup-badge-${badge}`, part: "badge" }, badge)),
    progress,
    h(
      "div",
      { class: "pickup-card-meta" },
      h("span", { class: "pickup-owner" }, c.owner.name),
      h("time", { datetime: when, title: full(when) }, ago(Date.parse(when), Date.now())),
      h("span", { class: "pickup-visually-hidden" }, `, ${full(when)}`),
      button({ class: "pickup-dismiss", part: "dismiss", "aria-label": fill("Dismiss {title}", c.title) }, "×"),
    ),
  );
}

const dates = new Intl.DateTimeFormat([], { dateStyle: "long", timeStyle: "short" });

/** card.rs's `full_time`: the date and time a relative time stands for. */
function full(when) {
  const t = Date.parse(when);
  return Number.isNaN(t) ? when : dates.format(t);
}

/** relative.rs's `relative_time`, worded by Intl as the widget words it. */
function ago(then, now) {
  const secs = Math.max(0, Math.floor((now - then) / 1000)) || 0;
  const [n, unit] =
    secs < 45 ? [0, "second"]
    : secs < 90 ? [1, "minute"]
    : secs < 3600 ? [Math.floor((secs + 30) / 60), "minute"]
    : secs < 5400 ? [1, "hour"]
    : secs < 86400 ? [Math.floor((secs + 1800) / 3600), "hour"]
    : [Math.floor(secs / 86400), "day"];
  return times.format(n === 0 ? 0 : -n, unit);
}
