// A page that does not jump (issue 47.2): on a phone's width, whatever arrives after the first
// paint (the drawing handed over to the widget, the cards, the since bar) keeps what is on screen
// in its place. Measured as the browser measures it: the layout shifts a PerformanceObserver sees
// (buffered), summed, leaving out those that follow input.
import type { Browser, Page } from "@playwright/test";
import { test, expect, startPickup, Pickup, SERVER_FN } from "./pickup";
import { HostPage } from "./host";

const PHONE = { width: 412, height: 823 };
const MAX_SHIFT = 0.02;

/** A new browser context (a cold load: nothing cached, no session) at a phone's width, whose
 *  page counts its layout shifts from the start. */
async function phone(browser: Browser) {
  const context = await browser.newContext({ viewport: PHONE });
  const page = await context.newPage();
  await page.addInitScript(() => {
    const shifts: { value: number; sources: string[] }[] = [];
    (window as any).shifts = shifts;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries() as any[]) {
        if (e.hadRecentInput) continue;
        const sources = (e.sources ?? []).map((s: any) => `${s.node?.nodeName}.${s.node?.className ?? ""} ${JSON.stringify(s.previousRect)} -> ${JSON.stringify(s.currentRect)}`);
        shifts.push({ value: e.value, sources });
      }
    }).observe({ type: "layout-shift", buffered: true });
  });
  return { context, page };
}

/** The shifts so far, once two frames have been painted after the widget settled. */
async function shifted(page: Page) {
  return page.evaluate(
    () =>
      new Promise<{ value: number; sources: string[] }[]>((resolve) =>
        requestAnimationFrame(() => requestAnimationFrame(() => resolve((window as any).shifts))),
      ),
  );
}

/** The widget itself (not the drawing that stands in front of it), within `within`. */
const widget = (page: Page, within: string) => page.locator(`${within} section.pickup:not([data-pickup-drawn])`);

/** Loads `url` cold and waits until the widget is live with `cards` cards and the since bar it
 *  shows (`since`: its words; none on a first visit, once its look is written); returns the sum
 *  of the shifts. */
async function load(browser: Browser, url: string, within: string, cards: number, since: string | null) {
  const { context, page } = await phone(browser);
  try {
    // A first visit's look, which the widget writes at its first page.
    const firstLook = since ? null : page.waitForResponse((r) => r.url().endsWith(SERVER_FN.look));
    await page.goto(url);
    const section = widget(page, within);
    await expect(section).toHaveAttribute("data-live", "live");
    await expect(section.locator(".pickup-card")).toHaveCount(cards);
    if (since) {
      await expect(section.locator(".pickup-since-count")).toHaveText(since);
    } else {
      expect((await firstLook!).ok()).toBe(true);
      await expect(section.locator(".pickup-since-count")).toHaveCount(0);
    }
    await expect(page.locator(`${within} [data-pickup-drawn]`)).toHaveCount(0);
    const shifts = await shifted(page);
    const total = shifts.reduce((sum, s) => sum + s.value, 0);
    return { total, shifts };
  } finally {
    await context.close();
  }
}

/** A first visit, then, after two changes, the same viewer's cold load: each within MAX_SHIFT. */
async function visits(browser: Browser, pickup: Pickup, url: string, within: string) {
  const bot = pickup.token("bot", ["acme"], { name: "Build bot", write: true });
  for (const [key, title] of [["etl", "Orders ETL"], ["train", "Nightly model training"], ["report", "Weekly report"]]) {
    await pickup.register(bot, "acme", { key, title, status: "running", progress: 0.3, url: `https://ci.example.com/${key}` });
  }
  const first = await load(browser, url, within, 3, null);
  console.log(`layout shift ${within}, first visit: ${first.total.toFixed(4)}`);
  expect(first.total, `first visit: ${JSON.stringify(first.shifts, null, 1)}`).toBeLessThanOrEqual(MAX_SHIFT);

  await pickup.register(bot, "acme", { key: "export", title: "Export to the warehouse", status: "queued" });
  await pickup.register(bot, "acme", { key: "thumbs", title: "Render thumbnails", status: "running", progress: 0.6 });
  const returning = await load(browser, url, within, 5, "2 changes since you looked");
  console.log(`layout shift ${within}, returning viewer: ${returning.total.toFixed(4)}`);
  expect(returning.total, `returning viewer: ${JSON.stringify(returning.shifts, null, 1)}`).toBeLessThanOrEqual(MAX_SHIFT);
}

test("the home page keeps its place on a phone, for a first visit and a returning viewer", async ({ browser, pickup }) => {
  await visits(browser, pickup, pickup.home("acme", pickup.token("alice", ["acme"], { name: "Alice" })), "[data-pickup-home]");
});

// The widget's first page comes after the host's page was painted: what follows an element
// without room kept for it moves down when it comes (docs/EMBEDDING.md says how to keep it).
// Here nothing follows it; what moves inside it is the widget's own doing.
test("a host page's <pickup-recent> keeps its place on a phone, for a first visit and a returning viewer", async ({ browser }) => {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    const alice = pickup.token("alice", ["acme"], { name: "Alice" });
    host.serve(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Host app</title></head>
<body style="margin: 0; font-family: sans-serif"><header style="padding: 1rem; background: #eee"><h1 style="margin: 0">Host app</h1></header>
<main style="padding: 1rem"><p>The team's work, as it happens:</p>
<pickup-recent workspace="acme" server="${pickup.url}" token="${alice}"></pickup-recent></main>
<script type="module" src="${pickup.url}/pickup.js"></script></body></html>`);
    await visits(browser, pickup, host.origin, "pickup-recent");
  } finally {
    await pickup.stop();
    await host.stop();
  }
});
