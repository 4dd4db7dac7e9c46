// A word when your own job is done: the bell asks the browser's permission on its click, and one
// notification per item per browser is shown, however many tabs, while none of them is visible.
// The browser's Notification API and page visibility are stood in for by an init script (a
// headless browser shows no notifications and never hides a page); share.js's `notify` is
// wrapped so the test knows when each tab has decided, rather than waiting a while.
import { test, expect } from "./pickup";
import type { BrowserContext, Page } from "@playwright/test";

type Note = { title: string; body: string; tag: string };

/** A context whose pages have a stand-in Notification with `permission` (a request answers
 *  `answer`), a page visibility the test sets (`__hide`), and report to the test each
 *  notification shown, each tab's decision, each `pickup:finished` and each page error. */
async function device(browser: any, permission: string, answer = permission) {
  const context: BrowserContext = await browser.newContext();
  const shown: Note[] = [];
  const decided: { tag: string; shown: boolean }[] = [];
  const finished: string[] = [];
  await context.exposeBinding("__shown", (_, note: Note) => void shown.push(note));
  await context.exposeBinding("__decided", (_, d) => void decided.push(d));
  await context.exposeBinding("__finished", (_, id: string) => void finished.push(id));
  await context.addInitScript(
    ([permission, answer]) => {
      const w = window as any;
      w.__asked = 0;
      w.__notes = [];
      // A browser's permission is its origin's, in every tab.
      class StandIn {
        static get permission() {
          return localStorage.getItem("test:permission") ?? permission;
        }
        static async requestPermission() {
          w.__asked += 1;
          localStorage.setItem("test:permission", answer);
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
      const share: any = new Proxy({}, {
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
      (globalThis as any)[Symbol.for("pickup:share")] = share;
      document.addEventListener("pickup:finished", (e: any) => w.__finished(e.detail.id));
    },
    [permission, answer],
  );
  const errors: Error[] = [];
  const tab = async (url: string) => {
    const page = await context.newPage();
    page.on("pageerror", (e) => errors.push(e));
    await page.goto(url);
    return page;
  };
  return { context, shown, decided, finished, errors, tab };
}

const widget = (page: Page) => page.locator("section.pickup:not([data-pickup-drawn])");
const hide = (page: Page, hidden: boolean) => page.evaluate((h) => (window as any).__hide(h), hidden);

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

  await hide(one, true);
  await hide(two, true);
  await pickup.update(alice, "acme", item.id, { title: "Train model", status: "succeeded", url: "/runs/7" });
  // Each tab's widget tells its host, and each tab decides; one shows it.
  await expect.poll(() => d.finished.filter((id) => id === item.id).length).toBe(2);
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

test("a visible tab: no notification, though the item's end is still told to the host", async ({ browser, pickup }) => {
  const alice = pickup.token("alice", ["acme"], { write: true });
  const item = await pickup.register(alice, "acme", { key: "etl", title: "ETL", status: "running" });
  const d = await device(browser, "granted");
  const home = pickup.home("acme", alice);
  const [one, two] = [await d.tab(home), await d.tab(home)];
  for (const page of [one, two]) await expect(widget(page).getByRole("listitem", { name: "ETL" })).toBeVisible();
  await widget(one).getByRole("button", { name: "Notify me when my items finish" }).click();
  await expect(widget(one).getByRole("button", { name: "Notifying you when your items finish" })).toBeVisible();
  await hide(one, true); // two stays in view
  await pickup.update(alice, "acme", item.id, { title: "ETL", status: "failed" });
  await expect.poll(() => d.decided.filter((x) => x.tag === item.id).length).toBe(2);
  expect(d.shown).toEqual([]);
  expect(d.finished.filter((id) => id === item.id)).toHaveLength(2);
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
    // Without the bell, hidden tabs rest; shown again, the widget catches up and decides.
    await hide(one, false);
    await expect(widget(one).getByRole("listitem", { name: "Sync" })).toHaveAttribute("data-status", "cancelled");
    // The bell is off: the widget tells its host, and asks for no notification (the same
    // effect does both, in one go).
    await expect.poll(() => d.finished.filter((id) => id === item.id).length).toBeGreaterThan(0);
    expect(d.decided).toEqual([]);
    expect(d.shown).toEqual([]);
    expect(await one.evaluate(() => (window as any).__asked)).toBe(0);
    expect(d.errors).toEqual([]);
    await d.context.close();
  });
}
