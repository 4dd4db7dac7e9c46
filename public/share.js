// One live stream per browser, not per widget or tab (over HTTP/1 a browser opens six connections
// to a server in all: a stream per tab left the seventh with nothing). The wasm's stream loop
// (app/src/components/stream.rs) asks `live` for its view, and takes its events, as data.
// The widgets of one server, workspace and viewer are a group: one tab holds its stream (Web
// Locks choose it; the next waiting takes over), opened with every view its tabs want
// (`?views=all:8,mine:20`), and tells the others what it reads by BroadcastChannel; each tab hands
// a widget the pages of its filter with at least its cap (RecentPage::for_view cuts them). What
// `union`, `query`, `serves` and `sse` answer, the Rust code does too: app/tests/cases/live.json.

import { HEADER, LIVE_EVENT, livePath, recentPath } from "./contract.js";

const TAB = Math.random().toString(36).slice(2);
const groups = new Map();

/** The stream of a widget's `view` (`{server, ws, filter, cap, authorization, signal}`): `{status}`
 *  if refused, else `{status: 200, events, holds}`: its events and whether this tab holds it. */
export function live(view) {
  watchVisibility();
  const { server = "", ws, filter, cap, authorization, signal } = view;
  const stream = new URL(`${server}${livePath(ws)}`, location.href).href;
  // An abort meanwhile is the group's to see (`open`).
  return check(`${server}${recentPath(ws)}`, authorization).then((taken) => {
    if (taken.refused) return { status: taken.refused };
    // A server that does not say whom it took the token for: the group is this token's.
    const key = `${stream}|${taken.viewer ?? authorization}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = new Group(key, stream)));
    return group.open({ filter, cap, authorization, signal });
  });
}

const checked = new Map(); // per token, the server's answer to a page of one card

/** Whether the server takes this tab's token (asked once per token), which the group's pages, that
 *  another tab's token opened, need: `{viewer}` it took it for, or `{refused}` with the status. */
function check(recent, authorization) {
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
  return asked;
}

/** The views a stream is opened with for the views wanted: per filter, the largest cap. */
export function union(wanted) {
  const caps = {};
  for (const { filter, cap } of wanted) caps[filter] = Math.max(cap, caps[filter] ?? 0);
  return Object.keys(caps).sort().map((filter) => ({ filter, cap: caps[filter] }));
}
/** Views as `?views=` writes them. */
export const query = (views) => views.map(({ filter, cap }) => `${filter}:${cap}`).join(",");

/** Whether a page of the shared stream, or a view of it, serves a widget's view. */
export const serves = (page, { filter, cap }) => page?.filter === filter && page.cap >= cap;
const covers = (views, view) => views.some((v) => serves(v, view));

/** Server-sent events as `{name, data}`: no `name` for a comment (a keep-alive), a page's `data`
 *  parsed (null if not JSON: the widget then polls, which says why). */
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
  left = false;

  constructor(key, url) {
    this.key = key;
    this.url = url;
    this.stop = new AbortController();
    const name = `pickup-live:${key}`;
    this.channel = new BroadcastChannel(name);
    this.channel.onmessage = (m) => this.heard(m.data);
    const held = () =>
      new Promise((release) => {
        this.release = release;
        this.hold();
      });
    // Given up (the group left before its turn): nothing to hold.
    if (navigator.locks) navigator.locks.request(name, { signal: this.stop.signal }, held).catch(() => {});
    else this.hold();
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
      } else if (this.upstream?.open && covers(this.upstream.views, sub)) this.start(sub);
      else this.connectSoon();
    });
  }

  views() {
    return [...this.subs].map(({ filter, cap }) => ({ filter, cap }));
  }

  /** Hands `sub` its stream, and its page at once if this tab has it. */
  start(sub) {
    const events = new ReadableStream({ start: (out) => (sub.out = out), cancel: () => this.drop(sub) });
    sub.resolve({ status: 200, events, holds: () => this.holding && !this.left });
    const page = this.pages.get(sub.filter);
    if (serves(page?.data, sub)) sub.out.enqueue(page);
  }

  /** Ends `sub`'s stream (or its wait for one), and the group with its last. */
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
    this.channel.close();
  }

  post(message) {
    try {
      if (!this.left) this.channel.postMessage(message);
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

  /** Opens (or reopens, for more views) the stream in the next task: the widgets started in this
   *  one (all of a page's, when the wasm starts) are asked for at once. */
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
    // Low: a stream never ends, and the page waits for nothing of it.
    const init = { headers: { Authorization: this.authorization }, signal: up.abort.signal, priority: "low" };
    const res = await fetch(`${this.url}?views=${asked}`, init).catch((e) => current() && this.ended(e));
    if (!res || !current()) return;
    if (res.status !== 200) {
      await res.arrayBuffer().catch(() => {}); // read: a body left unread keeps its connection
      if (!current()) return;
      this.upstream = null;
      // Each widget gets the refusal as its own answer: an open stream a refused token as the
      // server tells it (so it renews it), a waiting one the status.
      for (const sub of [...this.subs]) {
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

  /** The stream ended or failed: so do the widgets' (they try again, backing off). */
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

// Notifications: the wasm decides which items ended (app/src/finished.rs); the tab holding that
// widget's stream shows it while no tab showing a widget is visible (its `tag` folds repeats).

const VISIBLE = "pickup-visible:";
let watching = false;
let release = null; // this tab's lock, held while it is visible

/** While this tab is visible it holds a Web Lock of its own, which `notify` finds in any tab. */
function watchVisibility() {
  if (watching || !navigator.locks) return;
  watching = true;
  const sync = () => {
    const shown = document.visibilityState === "visible";
    if (shown && !release) navigator.locks.request(`${VISIBLE}${TAB}`, () => new Promise((r) => (release = r))).catch(() => {});
    if (!shown && release) {
      release();
      release = null;
    }
  };
  document.addEventListener("visibilitychange", sync);
  sync();
}

/** Shows `{tag, title, body}` (an item ended) for a widget whose stream is `feed` (null: none; its
 *  tab decides alone); its click calls `open`. Resolves to whether it was shown. */
export async function notify(feed, { tag, title, body }, open) {
  watchVisibility();
  if ((feed && !feed.holds()) || document.visibilityState === "visible") return false;
  const { held = [] } = (await navigator.locks?.query?.()) ?? {};
  if (held.some((lock) => lock.name?.startsWith(VISIBLE))) return false;
  const note = new Notification(title, { body, tag });
  note.onclick = () => {
    window.focus();
    note.close();
    open();
  };
  return true;
}
