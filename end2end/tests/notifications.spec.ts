// A word when your own job is done: the bell asks the browser's permission on its click, and one
// notification per item per browser is shown, however many tabs, while none of them is visible,
// by the tab that holds that widget's share of the stream; only a widget with the bell asks. Its
// click opens the item as a click on the card does, through `pickup:open`, which the host may
// cancel. What reaches the viewer (the card, `pickup:finished`, the notification) has the card's
// safe link only, and no bidirectional controls in its title.
// The browser's Notification API and page visibility are stood in for by an init script (a
// headless browser shows no notifications and never hides a page); share.js's `notify` is
// wrapped so the test knows when each tab has decided, rather than waiting a while.
import { test, expect, startPickup, itemPath, titles, Pickup, DOM_EVENT, SHARE, STORAGE } from "./pickup";
import { HostPage } from "./host";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "@playwright/test";

type Note = { title: string; body: string; tag: string };

/** A context whose pages have a stand-in Notification with `permission` (a request answers
 *  `answer`), the bell on already when `bell`, a page visibility the test sets (`__hide`), and
 *  report to the test each notification shown, each tab's decision, each `pickup:finished`'s
 *  detail and each page error. */
async function device(browser: Browser, permission: string, answer = permission, bell = false) {
  const context: BrowserContext = await browser.newContext();
  const shown: Note[] = [];
  const decided: { tag: string; shown: boolean }[] = [];
  const finished: any[] = [];
  await context.exposeBinding("__shown", (_, note: Note) => void shown.push(note));
  await context.exposeBinding("__decided", (_, d) => void decided.push(d));
  await context.exposeBinding("__finished", (_, detail) => void finished.push(detail));
  await context.addInitScript(
    ([permission, answer, bell, share, finishedEvent, bellKey]) => {
      const w = window as any;
      w.__asked = 0;
      w.__notes = [];
      if (bell) localStorage.setItem(bellKey as string, "on");
      // A browser's permission is its origin's, in every tab.
      class StandIn {
        static get permission() {
          return localStorage.getItem("test:permission") ?? permission;
        }
        static async requestPermission() {
          w.__asked += 1;
          localStorage.setItem("test:permission", answer as string);
          return answer;
        }
        onclick: (() => void) | null = null;
        constructor(title: string, opts: { body: string; tag: string }) {
          w.__notes.push(this);
          w.__shown({ title, body: opts.body, tag: opts.tag });
        }
        close() {}
      }
      w.Notification = StandIn;
      let hidden = false;
      Object.defineProperty(Document.prototype, "visibilityState", { get: () => (hidden ? "hidden" : "visible") });
      Object.defineProperty(Document.prototype, "hidden", { get: () => hidden });
      w.__hide = (h: boolean) => {
        hidden = h;
        document.dispatchEvent(new Event("visibilitychange"));
      };
      // share.js's notify, as loader.js installs it: each decision reported.
      const installed: any = new Proxy({}, {
        set(target: any, key, value) {
          target[key] =
            key === "notify"
              ? async (feed: unknown, note: Note, open: () => void) => {
                  const shown = await value(feed, note, open);
                  await w.__decided({ tag: note.tag, shown });
                  return shown;
                }
              : value;
          return true;
        },
      });
      (globalThis as any)[Symbol.for(share as string)] = installed;
      document.addEventListener(finishedEvent as string, (e: any) => w.__finished(e.detail));
    },
    [permission, answer, bell, SHARE, DOM_EVENT.finished, STORAGE.bell],
  );
  const errors: Error[] = [];
  const tab = async (url: string) => {
    const page = await context.newPage();
    page.on("pageerror", (e) => errors.push(e));
    await page.goto(url);
    return page;
  };
  const ids = () => finished.map((f) => f.id);
  return { context, shown, decided, finished, ids, errors, tab };
}

/** `run` with a host page's origin and a server that answers it; both stopped after. */
async function onHost(run: (host: HostPage, pickup: Pickup) => Promise<void>) {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    await run(host, pickup);
  } finally {
    await pickup.stop();
    await host.stop();
  }
}

const widget = (page: Page, within = "") => page.locator(`${within} section.pickup:not([data-pickup-drawn])`.trim());
const hide = (page: Page, hidden: boolean) => page.evaluate((h) => (window as any).__hide(h), hidden);

/** A host page of `<pickup-recent notify>` elements, one per viewer named in its URL's fragment
 *  (`#alice,bob`), each with its id; `add(who)` adds one. Its host routes the item a
 *  `pickup:open` names itself, when `window.route` says so. */
function hostPage(pickup: Pickup, tokens: Record<string, string>, attrs: Record<string, string> = {}) {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Host app</title></head><body>
<script type="module">
  import "${pickup.url}/pickup.js";
  const tokens = ${JSON.stringify(tokens)};
  const attrs = ${JSON.stringify(attrs)};
  window.opened = [];
  document.addEventListener("${DOM_EVENT.open}", (e) => {
    window.opened.push(e.detail);
    if (window.route) {
      e.preventDefault();
      history.pushState(null, "", "/routed" + e.detail.url);
    }
  });
  window.add = (id) => {
    const el = document.createElement("pickup-recent");
    el.id = id;
    el.setAttribute("workspace", "acme");
    el.setAttribute("server", "${pickup.url}");
    el.setAttribute("refresh", "600");
    for (const [name, value] of Object.entries(attrs[id] ?? { notify: "" })) el.setAttribute(name, value);
    el.token = tokens[id];
    document.body.append(el);
  };
  for (const id of location.hash.slice(1).split(",")) window.add(id);
</script></body></html>`;
}

test("granted on the bell's click: one notification for two background tabs, which opens the item", async ({ browser, pickup }) => {
  const alice = pickup.token("alice", ["acme"], { write: true });
  const item = await pickup.register(alice, "acme", { key: "train", title: "Train model", status: "running", url: "/runs/7" });
  const d = await device(browser, "default", "granted");
  const home = pickup.home("acme", alice);
  const [one, two] = [await d.tab(home), await d.tab(home)];
  for (const page of [one, two]) await expect(widget(page).getByRole("listitem", { name: "Train model" })).toBeVisible();

  // Never asked on load; asked on the click.
  expect(await one.evaluate(() => (window as any).__asked)).toBe(0);
  const bell = widget(one).getByRole("button", { name: "Notify me when my items finish" });
  await expect(bell).toHaveAttribute("aria-pressed", "false");
  await bell.click();
  await expect(widget(one).getByRole("button", { name: "Notifying you when your items finish" })).toHaveAttribute("aria-pressed", "true");
  expect(await one.evaluate(() => (window as any).__asked)).toBe(1);
  expect(await one.evaluate((key) => localStorage.getItem(key), STORAGE.bell)).toBe("on");

  await hide(one, true);
  await hide(two, true);
  await pickup.update(alice, "acme", item.id, { title: "Train model", status: "succeeded", url: "/runs/7" });
  // Each tab's widget tells its host, and each tab decides; one shows it.
  await expect.poll(() => d.ids().filter((id) => id === item.id).length).toBe(2);
  await expect.poll(() => d.decided.filter((x) => x.tag === item.id).length).toBe(2);
  expect(d.decided.filter((x) => x.shown)).toHaveLength(1);
  expect(d.shown).toEqual([{ title: "Train model", body: "succeeded", tag: item.id }]);

  // Its click opens the item's link in the tab that showed it, as a click on its card would.
  const holder = (await one.evaluate(() => (window as any).__notes.length)) ? one : two;
  const opened = holder.waitForRequest((r) => r.isNavigationRequest() && new URL(r.url()).pathname === "/runs/7");
  await holder.evaluate(() => (window as any).__notes[0].onclick());
  await opened;
  expect(d.errors).toEqual([]);
  await d.context.close();
});

test("a notification's click is the card's: pickup:open first, and a host that routes the item is obeyed", async ({ browser }) => {
  await onHost(async (host, pickup) => {
    const alice = pickup.token("alice", ["acme"], { write: true });
    const item = await pickup.register(alice, "acme", { key: "train", title: "Train model", status: "running", url: "/runs/7" });
    host.serve(hostPage(pickup, { alice }));
    const d = await device(browser, "granted", "granted", true);
    const page = await d.tab(`${host.origin}/#alice`);
    await expect(widget(page, "#alice")).toHaveAttribute("data-live", "live");
    const navigations: string[] = [];
    page.on("request", (r) => r.isNavigationRequest() && navigations.push(r.url()));
    await hide(page, true);
    await pickup.update(alice, "acme", item.id, { title: "Train model", status: "succeeded", url: "/runs/7" });
    await expect.poll(() => d.shown.length).toBe(1);

    await page.evaluate(() => ((window as any).route = true));
    await page.evaluate(() => (window as any).__notes[0].onclick());
    await page.waitForURL(`${host.origin}/routed/runs/7`);
    expect(await page.evaluate(() => (window as any).opened)).toEqual([{ id: item.id, key: "train", url: "/runs/7" }]);
    // The page is the host's still (a navigation would have replaced it), and went nowhere.
    expect(await page.evaluate(() => typeof (window as any).add)).toBe("function");
    expect(navigations).toEqual([]);
    expect(d.errors).toEqual([]);
    await d.context.close();
  });
});

test("two viewers in one browser: each item's notification once, from the tab that holds its viewer's stream", async ({ browser }) => {
  await onHost(async (host, pickup) => {
    const tokens = { alice: pickup.token("alice", ["acme"], { write: true }), bob: pickup.token("bob", ["acme"], { write: true }) };
    const runs = {
      alice: await pickup.register(tokens.alice, "acme", { key: "a", title: "Alice's run", status: "running" }),
      bob: await pickup.register(tokens.bob, "acme", { key: "b", title: "Bob's run", status: "running" }),
    };
    host.serve(hostPage(pickup, tokens));
    const d = await device(browser, "granted", "granted", true);
    // The first tab holds Alice's stream; the second, opened with Bob's widget first, Bob's;
    // then each tab shows both viewers' widgets.
    const first = await d.tab(`${host.origin}/#alice`);
    await expect(widget(first, "#alice")).toHaveAttribute("data-live", "live");
    const second = await d.tab(`${host.origin}/#bob,alice`);
    for (const who of ["#bob", "#alice"]) await expect(widget(second, who)).toHaveAttribute("data-live", "live");
    await first.evaluate(() => (window as any).add("bob"));
    await expect(widget(first, "#bob")).toHaveAttribute("data-live", "live");
    await hide(first, true);
    await hide(second, true);

    for (const [who, title] of [["alice", "Alice's run"], ["bob", "Bob's run"]] as const) {
      await pickup.update(tokens[who], "acme", runs[who].id, { title, status: "succeeded" });
      // Both tabs' widgets of that viewer decide (the other viewer's are not told: not theirs).
      await expect.poll(() => d.decided.filter((x) => x.tag === runs[who].id).length).toBe(2);
    }
    expect(d.shown.map((n) => n.title)).toEqual(["Alice's run", "Bob's run"]);
    expect(d.ids().sort()).toEqual([runs.alice.id, runs.alice.id, runs.bob.id, runs.bob.id].sort());
    expect(d.errors).toEqual([]);
    await d.context.close();
  });
});

test("the bell is per widget: one without it rests while its tab is hidden and asks for no notification", async ({ browser }) => {
  await onHost(async (host, pickup) => {
    const alice = pickup.token("alice", ["acme"], { write: true });
    const item = await pickup.register(alice, "acme", { key: "etl", title: "ETL", status: "running" });
    // Two widgets of one viewer; the bell is on in this browser, shown by one of them only.
    host.serve(hostPage(pickup, { belled: alice, plain: alice }, { belled: { notify: "" }, plain: { cap: "3" } }));
    const d = await device(browser, "granted", "granted", true);
    const page = await d.tab(`${host.origin}/#belled,plain`);
    for (const id of ["#belled", "#plain"]) await expect(widget(page, id)).toHaveAttribute("data-live", "live");
    await hide(page, true);
    // Hidden, the plain widget closes its stream; the one with the bell keeps its own.
    await expect(widget(page, "#plain")).toHaveAttribute("data-live", "polling");
    await expect(widget(page, "#belled")).toHaveAttribute("data-live", "live");
    await pickup.update(alice, "acme", item.id, { title: "ETL", status: "failed" });
    await expect.poll(() => d.decided.length).toBe(1);
    expect(d.shown).toEqual([{ title: "ETL", body: "failed", tag: item.id }]);
    // Shown again, the plain widget catches up and tells its host too; still no notification.
    await hide(page, false);
    await expect.poll(() => d.ids()).toEqual([item.id, item.id]);
    expect(d.decided).toHaveLength(1);
    expect(d.errors).toEqual([]);
    await d.context.close();
  });
});

/** Every file under `dir`. */
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : [join(dir, n)]));
}

const BIDI = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/;

test("an ending told from a record the server would refuse: its title without bidirectional controls, its link only as the card's", async ({ browser, pickup }) => {
  const alice = pickup.token("alice", ["acme"], { write: true });
  const older = await pickup.register(alice, "acme", { key: "old", title: "placeholder", status: "running", url: "/placeholder-old" });
  const newer = await pickup.register(alice, "acme", { key: "new", title: "placeholder", status: "running", url: "/placeholder-new" });
  const newest = await pickup.register(alice, "acme", { key: "top", title: "Newest", status: "running" });
  // Records as an older server or another producer may have left them in the store: controls in
  // the title, a link the rule refuses or one to trim, finished (after the first page: news).
  const later = new Date(Date.now() + 3_600_000).toISOString();
  const stored = {
    "/placeholder-old": { title: "Rep\u202Eort\u2066 one\u200F", url: "javascript:alert(1)" },
    "/placeholder-new": { title: "Fin\u202Eal\u061C", url: " /runs/42\t" },
  };
  await pickup.stop();
  for (const file of files(pickup.storeDir)) {
    const record = /\.json$/.test(file) && JSON.parse(readFileSync(file, "utf8"));
    const tampered = record && stored[record.url as keyof typeof stored];
    if (tampered) writeFileSync(file, JSON.stringify({ ...record, ...tampered, status: "succeeded", finished_at: later }));
  }
  await pickup.restart();

  const d = await device(browser, "granted", "granted", true);
  // One card at a time: each ended item comes into view as the one above it goes.
  const page = await d.tab(pickup.home("acme", alice) + "&cap=1");
  await expect(titles(page)).toHaveText(["Newest"]);
  await expect(widget(page)).toHaveAttribute("data-live", "live");
  await hide(page, true);
  for (const gone of [newest, newer]) {
    const res = await fetch(`${pickup.url}${itemPath("acme", gone.id)}`, { method: "DELETE", headers: { authorization: `Bearer ${alice}` } });
    expect(res.status).toBe(204);
    await expect.poll(() => d.shown.length).toBe(gone === newest ? 1 : 2);
  }
  await expect(titles(page)).toHaveText(["Report one"]);
  expect(d.shown.map((n) => n.title)).toEqual(["Final", "Report one"]);
  expect(d.finished.map(({ id, title, url }) => ({ id, title, url }))).toEqual([
    { id: newer.id, title: "Final", url: "/runs/42" },
    { id: older.id, title: "Report one", url: null },
  ]);
  // Nowhere in the widget (card, announcement) is there a control.
  expect(await widget(page).evaluate((w) => w.textContent)).not.toMatch(BIDI);
  expect(d.errors).toEqual([]);
  await d.context.close();
});

test("a visible tab: no notification, though the item's end is still told to the host", async ({ browser, pickup }) => {
  const alice = pickup.token("alice", ["acme"], { write: true });
  const item = await pickup.register(alice, "acme", { key: "etl", title: "ETL", status: "running" });
  const d = await device(browser, "granted");
  const home = pickup.home("acme", alice);
  const [one, two] = [await d.tab(home), await d.tab(home)];
  for (const page of [one, two]) await expect(widget(page).getByRole("listitem", { name: "ETL" })).toBeVisible();
  await widget(one).getByRole("button", { name: "Notify me when my items finish" }).click();
  // The bell is the browser's: on in one tab, it shows on in the other (whose click would
  // otherwise turn it off), and both widgets decide on the item's end.
  for (const page of [one, two]) await expect(widget(page).getByRole("button", { name: "Notifying you when your items finish" })).toBeVisible();
  await hide(one, true); // two stays in view
  await pickup.update(alice, "acme", item.id, { title: "ETL", status: "failed" });
  await expect.poll(() => d.decided.filter((x) => x.tag === item.id).length).toBe(2);
  expect(d.shown).toEqual([]);
  expect(d.ids().filter((id) => id === item.id)).toHaveLength(2);
  await d.context.close();
});

for (const permission of ["denied", "default"]) {
  test(`permission ${permission === "denied" ? "denied" : "never asked"}: no notification, and no error`, async ({ browser, pickup }) => {
    const alice = pickup.token("alice", ["acme"], { write: true });
    const item = await pickup.register(alice, "acme", { key: "sync", title: "Sync", status: "running" });
    const d = await device(browser, permission);
    const home = pickup.home("acme", alice);
    const [one, two] = [await d.tab(home), await d.tab(home)];
    for (const page of [one, two]) await expect(widget(page).getByRole("listitem", { name: "Sync" })).toBeVisible();
    if (permission === "denied") {
      const bell = widget(one).getByRole("button", { name: /blocked/ });
      await expect(bell).toHaveAttribute("aria-pressed", "false");
      await bell.click(); // the browser is not asked again
    }
    await hide(one, true);
    await hide(two, true);
    await pickup.update(alice, "acme", item.id, { title: "Sync", status: "cancelled" });
    // Without the bell, hidden tabs rest; shown again, the widget catches up and tells its
    // host, and asks for no notification (the same effect does both, in one go).
    await hide(one, false);
    await expect(widget(one).getByRole("listitem", { name: "Sync" })).toHaveAttribute("data-status", "cancelled");
    await expect.poll(() => d.ids().filter((id) => id === item.id).length).toBeGreaterThan(0);
    expect(d.decided).toEqual([]);
    expect(d.shown).toEqual([]);
    expect(await one.evaluate(() => (window as any).__asked)).toBe(0);
    expect(d.errors).toEqual([]);
    await d.context.close();
  });
}
