// One live stream per browser, not per widget or tab (loader.js installs it; the wasm's stream
// loop, app/src/components/stream.rs, asks `live` for its view, as data, and takes its events
// as data: server-sent events are parsed here, once, by `sse`). Over HTTP/1 a browser opens six
// connections to a server in all; a stream per tab left the seventh tab with nothing, not even
// its polls.
//
// The widgets that watch one server and workspace as one viewer form a group. In each group
// one tab holds the stream (the Web Locks API chooses it; when that tab closes, or has no widget
// left, the next tab waiting takes over) and opens it with every view any tab's widgets want
// (`?views=all:8,mine:20`: one per filter, at the largest cap asked). It tells the other tabs
// what it reads through a BroadcastChannel. Each tab hands each of its widgets the pages of the
// widget's own filter with at least its cap (`serves`); the widget cuts them to its cap
// (RecentPage::for_view), so its loop (back-off, renewal, polling while not live, its token's
// end) is the same whether or not its tab holds the stream.
//
// Without Web Locks (not a secure context) each tab holds its own; without BroadcastChannel
// too, the widgets of one page still share one. app/tests/cases/live.json holds the cases that
// `union`, `query`, `serves` and `sse` answer as the Rust code does (app/tests/cases.test.mjs).

import { HEADER, LIVE_EVENT, livePath, recentPath } from "./contract.js";

const TAB = Math.random().toString(36).slice(2);
const groups = new Map();

/** A widget's live stream of `view` (`{server, ws, filter, cap, authorization, signal}`):
 *  resolves to `{status}` for a refusal, or to `{status: 200, events, holds}`: a ReadableStream
 *  of its events (`{name, data}`, `data` parsed for a page, `name` undefined for a keep-alive)
 *  and whether this tab holds the stream (and shows its notifications). */
export function live(view) {
  watchVisibility();
  const { server = "", ws, filter, cap, authorization, signal } = view;
  const stream = new URL(`${server}${livePath(ws)}`, location.href).href;
  return check(`${server}${recentPath(ws)}`, authorization, signal).then((taken) => {
    if (taken.refused) return { status: taken.refused };
    // A server that does not say whom it took the token for: this widget's stream is its own.
    if (!taken.viewer) return own(`${stream}?filter=${filter}&cap=${cap}`, authorization, signal);
    const key = `${stream}|${taken.viewer}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = new Group(key, stream)));
    return group.open({ filter, cap, authorization, signal });
  });
}

/** Each token's answer from the server: a page of one card (shared by its read cache). */
const checked = new Map();

/** Whether the server takes this tab's own token, asked once per token: a tab is shown the
 *  group's pages (which another tab's token opened) only with a token the server would have
 *  opened its stream for. `{viewer}`: whom the server took it for (the group is that viewer's
 *  tabs); or `{refused}`, the refusal's status (401, 403, 503, …), which the widget then handles
 *  as it would its own stream's. The server says it, having verified the token. */
function check(recent, authorization, signal) {
  const key = `${recent}|${authorization}`;
  let asked = checked.get(key);
  if (!asked) {
    asked = fetch(`${recent}?cap=1`, { headers: { Authorization: authorization } }).then(async (res) => {
      await res.arrayBuffer(); // read: a body left unread keeps its connection
      return res.ok ? { viewer: res.headers.get(HEADER.viewer) } : { refused: res.status };
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

/** The views a stream is opened with for the views wanted: per filter, the largest cap. */
export function union(wanted) {
  const caps = {};
  for (const { filter, cap } of wanted) caps[filter] = Math.max(cap, caps[filter] ?? 0);
  return Object.keys(caps).sort().map((filter) => ({ filter, cap: caps[filter] }));
}
/** Views as the stream's `?views=` writes them. */
export const query = (views) => views.map(({ filter, cap }) => `${filter}:${cap}`).join(",");

/** Whether a page of the shared stream (or a view of it: both name a filter and a cap) serves
 *  a widget's view. */
export const serves = (page, { filter, cap }) => page?.filter === filter && page.cap >= cap;
const covers = (views, view) => views.some((v) => serves(v, view));

/** A stream this widget has to itself (no group shares it). */
async function own(url, authorization, signal) {
  const res = await fetch(url, { headers: { Authorization: authorization }, signal });
  if (res.status !== 200) {
    res.body?.cancel().catch(() => {});
    return { status: res.status };
  }
  return { status: 200, events: res.body.pipeThrough(new TextDecoderStream()).pipeThrough(sse()), holds: () => true };
}

/** Server-sent events as text comes, as `{name, data}`: `name` undefined for a comment (a
 *  keep-alive), a page's `data` parsed (null when it is not JSON: the widget then polls, which
 *  says why). Pickup's events have one data line. */
export function sse() {
  let text = "";
  return new TransformStream({
    transform(chunk, out) {
      text += chunk;
      for (let at; (at = text.indexOf("\n\n")) >= 0; ) {
        const block = text.slice(0, at);
        text = text.slice(at + 2);
        const name = /^event:\s*(.*)$/m.exec(block)?.[1].trim();
        const data = /^data:\s*(.*)$/m.exec(block)?.[1] ?? "";
        out.enqueue({ name, data: name === LIVE_EVENT.page ? parsed(data) : data });
      }
    },
  });
}

function parsed(data) {
  try {
    return JSON.parse(data);
  } catch {
    return null;
  }
}

class Group {
  subs = new Set(); // this tab's widgets' streams: {filter, cap, resolve, reject, out}
  pages = new Map(); // filter → the newest page event
  remote = new Map(); // holder only: tab → the views its widgets want
  upstream = null; // holder only: {abort, views, asked (their query), open}
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

  open({ filter, cap, authorization, signal }) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const sub = { filter, cap, resolve, reject, out: null };
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

  /** Hands `sub` its stream, with its page at once when this tab has it. */
  start(sub) {
    const events = new ReadableStream({ start: (out) => (sub.out = out), cancel: () => this.drop(sub) });
    sub.resolve({ status: 200, events, holds: () => this.holding && !this.left });
    const page = this.pages.get(sub.filter);
    if (serves(page?.data, sub)) sub.out.enqueue(page);
  }

  /** Ends `sub`'s stream (or its wait for one) and leaves the group when it was the last. */
  drop(sub, reason) {
    if (!this.subs.delete(sub)) return;
    try {
      if (!sub.out) sub.reject(reason ?? new Error("the stream ended"));
      else if (reason) sub.out.error(reason);
      else sub.out.close();
    } catch {
      // cancelled by its reader already
    }
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
    const asked = query(views);
    if (!asked || this.upstream?.asked === asked) return;
    this.upstream?.abort.abort();
    const up = (this.upstream = { abort: new AbortController(), views, asked, open: false });
    const current = () => this.upstream === up;
    let res;
    try {
      res = await fetch(`${this.url}?views=${asked}`, { headers: { Authorization: this.authorization }, signal: up.abort.signal });
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
        // A widget whose stream was open already is told a refused token as the server tells
        // it on an open stream, so it renews it; any other refusal ends its stream, and its
        // next try is answered with the refusal itself.
        if (sub.out && res.status === 401) sub.out.enqueue({ name: LIVE_EVENT.unauthenticated, data: "{}" });
        if (sub.out) this.drop(sub);
        else this.subs.delete(sub) && sub.resolve({ status: res.status });
      }
      if (this.subs.size === 0) this.leave();
      return;
    }
    up.open = true;
    for (const sub of this.subs) if (!sub.out) this.start(sub);
    try {
      const reader = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(sse()).getReader();
      for (let read; current() && !(read = await reader.read()).done; ) {
        // The token's end is this tab's own (the others' tokens may hold): not told to them.
        if (read.value.name !== LIVE_EVENT.unauthenticated) this.post({ t: "event", event: read.value });
        this.deliver(read.value);
      }
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

  /** An event of the stream, to this tab's widgets: a page to those it serves. */
  deliver(event) {
    const page = event.name === LIVE_EVENT.page && event.data;
    if (page) this.pages.set(page.filter, event);
    for (const sub of this.subs) if (sub.out && (!page || serves(page, sub))) sub.out.enqueue(event);
  }

  /** What another tab of this group said. */
  heard(m) {
    if (m.t === "event" && !this.holding) this.deliver(m.event);
    else if (m.t === "hello" && !this.holding) this.post({ t: "want", tab: TAB, views: this.views() });
    else if (m.t === "want" && this.holding) {
      this.remote.set(m.tab, m.views);
      if (!this.upstream?.open || m.views.some((v) => !covers(this.upstream.views, v))) this.connectSoon();
      // A tab that just joined gets the pages at once, not at the next change.
      else for (const event of this.pages.values()) this.post({ t: "event", event });
    } else if (m.t === "bye") this.remote.delete(m.tab);
  }
}

// Notifications: the word when one of the viewer's own items ends while no tab showing a widget
// is visible. The wasm decides which items ended (app/src/finished.rs), in each widget that
// shows the bell while it is on (app/src/components/bell.rs keeps the opt-in); the tab holding
// that widget's stream shows it, so the browser shows one however many tabs are open (and the
// item id as `tag` folds repeats, when there are no Web Locks and each tab holds its own).

const VISIBLE = "pickup-visible:";

/** Tells the browser this tab shows widgets while it is visible: a Web Lock of its own held
 *  while visible, which the holder of a stream finds with `navigator.locks.query()`. */
let visibility = null;
function watchVisibility() {
  if (visibility || !navigator.locks) return;
  visibility = { release: null };
  const sync = () => {
    const shown = document.visibilityState === "visible";
    if (shown && !visibility.release) {
      navigator.locks.request(`${VISIBLE}${TAB}`, () => new Promise((release) => (visibility.release = release))).catch(() => {});
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

/** One of the viewer's items ended, told by a widget with its bell on whose stream is `feed`
 *  (null while it has none: its tab decides alone): `{tag, title, body}`. Shown by the tab that
 *  holds that stream while no tab showing a widget is visible; its click calls `open` (which
 *  opens the item as a click on its card does). Resolves to whether it was shown. */
export async function notify(feed, { tag, title, body }, open) {
  watchVisibility();
  if ((feed && !feed.holds()) || (await anyVisible())) return false;
  const note = new Notification(title, { body, tag });
  note.onclick = () => {
    window.focus();
    note.close();
    open();
  };
  return true;
}
