// One live stream per browser, not per widget or tab (loader.js installs it; the wasm's stream
// loop, app/src/components/stream.rs, calls `live` below for its stream, and takes its events
// as data: server-sent events are parsed here, once, by `events`). Over
// HTTP/1 a browser opens six connections to a server in all; a stream per tab left the seventh
// tab with nothing, not even its polls.
//
// The widgets that watch one server and workspace as one viewer form a group. In each group
// one tab holds the stream (the Web Locks API chooses it; when that tab closes, or has no widget
// left, the next tab waiting takes over) and opens it with every page any tab's widgets want
// (`?views=all:8,mine:20`: one per filter, at the largest cap asked). It tells the other tabs
// what it reads through a BroadcastChannel. Each tab cuts the pages down to its widgets' caps
// and hands each widget a feed of its own page's events, as the server would have sent them; so
// the widget's loop (back-off, renewal, polling while not live) is the same whether or not it
// holds the stream.
//
// Without Web Locks (not a secure context) each tab holds its own; without BroadcastChannel
// too, the widgets of one page still share one.

import { FILTER, HEADER, LIVE_EVENT, LIVE_PATTERN as LIVE, recentPath } from "./contract.js";

const TAB = Math.random().toString(36).slice(2);
const groups = new Map();

/** A widget's live stream at `url` (its `init`: the Authorization header, the abort signal):
 *  resolves to a `Feed` of its events, or of none with the refusal's status. */
export function live(url, init = {}) {
  watchVisibility();
  const u = new URL(url, location.href);
  const ws = LIVE.exec(u.pathname)?.[1];
  const filter = u.searchParams.get("filter") ?? FILTER.all;
  const cap = Number(u.searchParams.get("cap"));
  if (!ws || !Number.isInteger(cap) || cap < 1 || u.searchParams.has("views")) return fetch(url, init).then(Feed.of);
  const authorization = new Headers(init.headers).get("Authorization") ?? "";
  const stream = `${u.origin}${u.pathname}`;
  const recent = `${u.origin}${recentPath(decodeURIComponent(ws))}`;
  return check(recent, authorization, init.signal).then((taken) => {
    if (taken.refused) return Feed.refused(taken.refused);
    // A server that does not say whom it took the token for: this widget's stream is its own.
    if (!taken.viewer) return fetch(url, init).then(Feed.of);
    const key = `${stream}|${taken.viewer}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = new Group(key, stream)));
    return group.open({ filter, cap, authorization, expires: taken.expires, signal: init.signal });
  });
}

/** Each token's answer from the server: a page of one card (shared by its read cache). */
const checked = new Map();

/** Whether the server takes this tab's own token, asked once per token: a tab is shown the
 *  group's pages (which another tab's token opened) only with a token the server would have
 *  opened its stream for. `{viewer, expires}`: whom the server took it for (the group is that
 *  viewer's tabs), and when it expires (ms); or `{refused}`, the refusal's status (401, 403,
 *  503, …), which the widget then handles as it would its own stream's. The server says both,
 *  having verified the token: nothing here reads the token itself. */
function check(recent, authorization, signal) {
  const key = `${recent}|${authorization}`;
  let asked = checked.get(key);
  if (!asked) {
    asked = fetch(`${recent}?cap=1`, { headers: { Authorization: authorization } })
      .then(async (res) => {
        await res.arrayBuffer(); // read: a body left unread keeps its connection
        if (!res.ok) return { refused: res.status };
        const expires = Number(res.headers.get(HEADER.tokenExpires)) * 1000;
        return { viewer: res.headers.get(HEADER.viewer), expires: expires > 0 ? expires : Infinity };
      });
    checked.set(key, asked);
    // Not an answer (the server unreachable, or busy): the next stream asks again.
    asked.then(({ refused }) => refused && refused !== 401 && refused !== 403 && checked.delete(key), () => checked.delete(key));
  }
  return signal ? Promise.race([asked, aborted(signal)]) : asked;
}

/** Rejects when `signal` aborts. */
const aborted = (signal) =>
  new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });

/** `all:8,mine:20` from the views wanted: per filter, the largest cap. */
function union(views) {
  const caps = new Map();
  for (const { filter, cap } of views) caps.set(filter, Math.max(cap, caps.get(filter) ?? 0));
  return [...caps].sort().map(([f, c]) => `${f}:${c}`).join(",");
}
const covers = (have, { filter, cap }) => have.split(",").some((v) => {
  const [f, c] = v.split(":");
  return f === filter && Number(c) >= cap;
});

/** A widget's stream, as data: its `status` (200, or the refusal's), then its events one by one
 *  from `next()`: `{name, data}`, `data` parsed for a page (an object) and `name` undefined for a
 *  keep-alive; null once it ended, and a rejection when it was cut off. */
export class Feed {
  #queue = [];
  #ended = null; // {error} once ended
  #wake = null;

  constructor(status, onCancel = () => {}) {
    this.status = status;
    this.cancel = onCancel;
  }

  /** A refusal: a status and no events. */
  static refused(status) {
    const feed = new Feed(status);
    feed.end();
    return feed;
  }

  /** The feed of a stream the browser fetched itself (one no group shares). */
  static of(res) {
    if (res.status !== 200) {
      res.body?.cancel().catch(() => {});
      return Feed.refused(res.status);
    }
    const reader = res.body.getReader();
    const feed = new Feed(200, () => reader.cancel().catch(() => {}));
    (async () => {
      for await (const { name, data } of events(reader)) feed.push(name, name === LIVE_EVENT.page ? parsed(data) : data);
      feed.end();
    })().catch((e) => feed.end(e));
    return feed;
  }

  push(name, data) {
    if (this.#ended) return;
    this.#queue.push({ name, data });
    this.#wake?.();
  }

  end(error) {
    if (this.#ended) return;
    this.#ended = { error };
    this.#wake?.();
  }

  async next() {
    for (;;) {
      if (this.#queue.length) return this.#queue.shift();
      if (this.#ended) {
        if (this.#ended.error) throw this.#ended.error;
        return null;
      }
      await new Promise((wake) => (this.#wake = wake));
      this.#wake = null;
    }
  }
}

/** A page event's data, or null when it is not JSON (the widget then polls, which says why). */
function parsed(data) {
  try {
    return JSON.parse(data);
  } catch {
    return null;
  }
}

class Group {
  subs = new Set(); // this tab's widgets' streams: {filter, cap, authorization, resolve, reject, out: Feed}
  pages = new Map(); // filter → the newest page event's data, parsed ({filter, cap, cards, …})
  remote = new Map(); // holder only: tab → the views its widgets want
  upstream = null; // holder only: {abort, views, open}
  holding = false;
  release = null;
  authorization = "";
  left = false;

  constructor(key, url) {
    this.key = key;
    this.url = url;
    this.stop = new AbortController();
    const name = `pickup-live:${key}`;
    if (globalThis.BroadcastChannel) {
      this.channel = new BroadcastChannel(name);
      this.channel.onmessage = (m) => this.heard(m.data);
    }
    if (this.channel && navigator.locks) {
      navigator.locks
        .request(name, { signal: this.stop.signal }, () => new Promise((release) => {
          this.release = release;
          this.hold();
        }))
        .catch(() => {}); // given up (this group left before its turn)
    } else {
      this.hold();
    }
  }

  open({ filter, cap, authorization, expires, signal }) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const sub = { filter, cap, authorization, expires, resolve, reject, out: null, timer: null };
      signal?.addEventListener("abort", () => this.drop(sub, signal.reason), { once: true });
      this.subs.add(sub);
      this.authorization = authorization;
      if (!this.holding) {
        this.start(sub);
        this.post({ t: "want", tab: TAB, views: this.views() });
      } else if (this.upstream?.open && covers(this.upstream.views, sub)) {
        this.start(sub);
      } else {
        this.connectSoon();
      }
    });
  }

  views() {
    return [...this.subs].map(({ filter, cap }) => ({ filter, cap }));
  }

  /** Hands `sub` its stream (status 200), and its page at once when this tab has it. */
  start(sub) {
    // Its token's own end (the holder's stream goes on with the holder's token): as the server
    // ends a stream at `exp`, so the widget renews it. Only ever earlier than the server would.
    const left = sub.expires - Date.now();
    if (left < 2 ** 31) {
      sub.timer = setTimeout(() => {
        this.send(sub, LIVE_EVENT.unauthenticated, {});
        this.drop(sub);
      }, Math.max(0, left));
    }
    sub.out = new Feed(200, () => this.drop(sub));
    sub.resolve(sub.out);
    const page = this.pages.get(sub.filter);
    if (page && page.cap >= sub.cap) this.send(sub, LIVE_EVENT.page, cut(page, sub.cap));
  }

  send(sub, name, data) {
    sub.out.push(name, data);
  }

  /** Ends `sub`'s stream (or its wait for one) and leaves the group when it was the last. */
  drop(sub, reason) {
    if (!this.subs.delete(sub)) return;
    clearTimeout(sub.timer);
    if (sub.out) sub.out.end(reason);
    else sub.reject(reason ?? new Error("the stream ended"));
    if (this.subs.size === 0) this.leave();
  }

  leave() {
    if (this.left) return;
    this.left = true;
    if (groups.get(this.key) === this) groups.delete(this.key);
    this.upstream?.abort.abort();
    this.upstream = null;
    this.post({ t: "bye", tab: TAB });
    this.stop.abort();
    this.release?.();
    this.channel?.close();
  }

  post(message) {
    if (this.left) return;
    try {
      this.channel?.postMessage(message);
    } catch {
      // closed under us (the page is going away): nobody left to tell
    }
  }

  /** This tab's turn to hold the stream. */
  hold() {
    this.holding = true;
    this.post({ t: "hello" });
    if (this.subs.size) this.connectSoon();
  }

  /** Opens (or reopens, for more views) the stream in the next task, so the widgets mounted in
   *  this one (the elements of a page, all started when the wasm is) are asked for in one. */
  connectSoon() {
    if (this.connecting) return;
    this.connecting = true;
    setTimeout(() => {
      this.connecting = false;
      if (groups.get(this.key) === this && this.holding) this.connect();
    });
  }

  async connect() {
    const views = union([...this.views(), ...[...this.remote.values()].flat()]);
    if (!views || (this.upstream && this.upstream.views === views)) return;
    this.upstream?.abort.abort();
    const up = (this.upstream = { abort: new AbortController(), views, open: false });
    const current = () => this.upstream === up;
    let res;
    try {
      res = await fetch(`${this.url}?views=${views}`, {
        headers: { Authorization: this.authorization },
        signal: up.abort.signal,
      });
    } catch (e) {
      if (current()) this.ended(e);
      return;
    }
    if (!current()) return;
    if (res.status !== 200) {
      // A refusal (401, 403, 503 busy…): each waiting widget gets it as its own answer.
      await res.arrayBuffer().catch(() => {}); // read: a body left unread keeps its connection
      if (!current()) return;
      this.upstream = null;
      for (const sub of [...this.subs]) {
        if (sub.out) {
          // Its stream was open already: a refused token is said as the server says it on an
          // open stream, so the widget renews it; any other refusal ends the stream, and the
          // widget's next try is answered with the refusal itself.
          if (res.status === 401) this.send(sub, LIVE_EVENT.unauthenticated, {});
          this.drop(sub);
        } else {
          this.subs.delete(sub);
          clearTimeout(sub.timer);
          sub.resolve(Feed.refused(res.status));
        }
      }
      if (this.subs.size === 0) this.leave();
      return;
    }
    up.open = true;
    for (const sub of this.subs) if (!sub.out) this.start(sub);
    try {
      await this.read(res.body.getReader(), current);
    } catch {
      // cut off: as below
    }
    if (current()) this.ended();
  }

  /** The stream ended or failed: so do the widgets' streams (they try again, with back-off). */
  ended(reason) {
    this.upstream = null;
    for (const sub of [...this.subs]) this.drop(sub, sub.out ? undefined : reason);
  }

  async read(reader, current) {
    for await (const { name, data } of events(reader)) {
      if (!current()) return;
      if (!name) {
        this.beat();
        this.post({ t: "beat" });
        continue;
      }
      // The token's end is this tab's own (the others' tokens may hold): not told to them.
      if (name !== LIVE_EVENT.unauthenticated) this.post({ t: "event", name, data });
      this.deliver(name, data);
    }
  }

  beat() {
    for (const sub of this.subs) if (sub.out) sub.out.push(undefined, "");
  }

  /** An event of the stream, to this tab's widgets: a page, cut to each one's cap. */
  deliver(name, data) {
    if (name !== LIVE_EVENT.page) {
      for (const sub of [...this.subs]) if (sub.out) this.send(sub, name, data);
      return;
    }
    const page = parsed(data);
    if (!page) return;
    this.pages.set(page.filter, page);
    for (const sub of [...this.subs]) {
      if (sub.out && sub.filter === page.filter && page.cap >= sub.cap) this.send(sub, LIVE_EVENT.page, cut(page, sub.cap));
    }
  }

  /** What another tab of this group said. */
  heard(m) {
    if (m.t === "event" && !this.holding) this.deliver(m.name, m.data);
    else if (m.t === "beat" && !this.holding) this.beat();
    else if (m.t === "hello" && !this.holding) this.post({ t: "want", tab: TAB, views: this.views() });
    else if (m.t === "want" && this.holding) {
      this.remote.set(m.tab, m.views);
      if (!this.upstream?.open || m.views.some((v) => !covers(this.upstream.views, v))) this.connectSoon();
      // A tab that just joined gets the pages at once, not at the next change.
      else for (const page of this.pages.values()) this.post({ t: "event", name: LIVE_EVENT.page, data: JSON.stringify(page) });
    } else if (m.t === "bye") this.remote.delete(m.tab);
  }
}

/** A stream's server-sent events as they come: `{name, data}`, `name` undefined for a comment
 *  (a keep-alive). Pickup's events have one data line. */
export async function* events(reader) {
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    text += decoder.decode(value, { stream: true });
    let at;
    while ((at = text.indexOf("\n\n")) >= 0) {
      const block = text.slice(0, at);
      text = text.slice(at + 2);
      const name = /^event:\s*(.*)$/m.exec(block)?.[1].trim();
      yield { name, data: /^data:\s*(.*)$/m.exec(block)?.[1] ?? "" };
    }
  }
}

/** A page of the shared stream, as a stream of `cap` cards would have sent it: the same first
 *  cards (server/tests/scenarios/marker_index.rs checks that a smaller cap gives a prefix). Its `more` can
 *  be the surer one: the server's page of `cap` says "there may be more" when it did not look
 *  further, and the larger page did. */
function cut({ filter, cap: _, ...page }, cap) {
  const cards = page.cards.slice(0, cap);
  return { ...page, cards, more: page.more || page.cards.length > cap };
}

// Notifications: the bell (this browser's opt-in, asked on the viewer's click, never on load)
// and the word when one of the viewer's own items ends while no tab showing a widget is
// visible. The widget's wasm decides which items ended (app/src/finished.rs) in every tab; the
// tab holding the group's stream is the one that shows it, so the browser shows one however
// many tabs are open (and the item id as `tag` folds repeats, when there are no Web Locks and
// each tab holds its own).

const BELL = "pickup.notify";
const VISIBLE = "pickup-visible:";

/** The bell: "on" (opted in, permission granted), "off", "denied" (the browser refuses), or
 *  "unsupported" (no Notification API, or storage blocked). */
export function bell() {
  if (!globalThis.Notification) return "unsupported";
  if (Notification.permission === "denied") return "denied";
  try {
    return Notification.permission === "granted" && localStorage.getItem(BELL) === "on" ? "on" : "off";
  } catch {
    return "unsupported";
  }
}

/** The viewer's click on the bell: on (asking the browser's permission if it was never
 *  given) or off. Resolves to the bell as it is then. */
export async function ring() {
  if (bell() === "on") {
    localStorage.removeItem(BELL);
    return bell();
  }
  if (!globalThis.Notification || Notification.permission === "denied") return bell();
  const permission = Notification.permission === "granted" ? "granted" : await Notification.requestPermission();
  if (permission === "granted") localStorage.setItem(BELL, "on");
  return bell();
}

/** Tells the browser this tab shows widgets while it is visible: a Web Lock of its own held
 *  while visible, which the holder of a stream finds with `navigator.locks.query()`. */
let visibility = null;
function watchVisibility() {
  if (visibility || !navigator.locks) return;
  visibility = { release: null };
  const sync = () => {
    const shown = document.visibilityState === "visible";
    if (shown && !visibility.release) {
      navigator.locks
        .request(`${VISIBLE}${TAB}`, () => new Promise((release) => (visibility.release = release)))
        .catch(() => {});
    } else if (!shown && visibility.release) {
      visibility.release();
      visibility.release = null;
    }
  };
  document.addEventListener("visibilitychange", sync);
  sync();
}

/** Whether any tab of this browser showing a widget is visible. */
async function anyVisible() {
  if (document.visibilityState === "visible") return true;
  if (!navigator.locks?.query) return false;
  const { held = [] } = await navigator.locks.query();
  return held.some((lock) => lock.name?.startsWith(VISIBLE));
}

/** One of the viewer's items at the stream `url` ended: `{tag, title, body, href}` (`href`
 *  already passed the link rule, or null). Shown by the tab that holds that stream, when the
 *  bell is on and no tab showing a widget is visible. Resolves to whether it was shown. */
export async function notify(url, { tag, title, body, href }) {
  watchVisibility();
  if (bell() !== "on") return false;
  const stream = new URL(url, location.href);
  const mine = [...groups.values()].filter((g) => g.url === `${stream.origin}${stream.pathname}`);
  // In no group (an old server that does not say the viewer): this tab is its own holder.
  if (mine.length && !mine.some((g) => g.holding && !g.left)) return false;
  if (await anyVisible()) return false;
  const note = new Notification(title, { body, tag });
  // As a click on its card would: this tab, then the link (no new window, which a browser
  // blocks without a click in the page).
  note.onclick = () => {
    window.focus();
    note.close();
    if (href) location.assign(href);
  };
  return true;
}
