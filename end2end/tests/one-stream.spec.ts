// One live stream per browser (public/share.js): the tabs of one browser, and the widgets of one
// page, that watch one server and workspace as one viewer share one stream. Over plain HTTP/1 a
// browser opens six connections to a server: with a stream per tab, the seventh tab had nothing.
import { BrowserContext, Page } from "@playwright/test";
import { test, expect, startPickup, SERVER_FN, livePath } from "./pickup";
import { HostPage } from "./host";

// The widget itself, not the drawing that stands in for it until the wasm has drawn.
const widget = (page: Page, within = "") => page.locator(`${within} section.pickup:not([data-pickup-drawn])`.trim());
const titles = (page: Page, within = "") => page.locator(`${within} .pickup-card-title`.trim());

/** Every stream request the browser makes, from any tab. */
function liveRequests(context: BrowserContext): string[] {
  const seen: string[] = [];
  context.on("request", (r) => {
    if (r.url().includes(`${livePath("acme")}?`)) seen.push(r.url());
  });
  return seen;
}

test("eight tabs over HTTP/1 all live on one stream; when its tab closes, another takes it over", async ({ page }) => {
  const pickup = await startPickup({ PICKUP_METRICS_ADDR: "127.0.0.1:0" });
  try {
    const alice = pickup.token("alice", ["acme"], { name: "Alice", write: true });
    // Polling every ten minutes: what arrives within seconds came by the stream.
    const home = pickup.home("acme", pickup.token("bob", ["acme"])) + "&refresh=600";
    const opened = liveRequests(page.context());
    await page.goto(home);
    await expect(widget(page)).toHaveAttribute("data-live", "live");
    const tabs = [page];
    for (let i = 1; i < 8; i++) {
      const tab = await page.context().newPage();
      await tab.goto(home);
      tabs.push(tab);
    }
    for (const tab of tabs) {
      expect(await tab.evaluate(() => document.visibilityState)).toBe("visible");
      await expect(widget(tab)).toHaveAttribute("data-live", "live");
    }
    await expect.poll(() => pickup.streams()).toBe(1);
    expect(opened).toHaveLength(1);

    await pickup.register(alice, "acme", { key: "one", title: "First run", status: "running" });
    for (const tab of tabs) await expect(titles(tab)).toHaveText(["First run"], { timeout: 3_000 });

    // The first tab took the lock first and holds the stream; closed, the next tab opens it.
    await tabs.shift()!.close();
    await expect.poll(() => opened.length).toBe(2);
    await pickup.register(alice, "acme", { key: "two", title: "Second run", status: "running" });
    for (const tab of tabs) await expect(titles(tab)).toHaveText(["Second run", "First run"], { timeout: 5_000 });
    await expect.poll(() => pickup.streams()).toBe(1);
  } finally {
    await pickup.stop();
  }
});

test("widgets of one page with other caps and filters share one request, the stream, each with its own page", async ({ page }) => {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    const [alice, bob] = [pickup.token("alice", ["acme"], { write: true }), pickup.token("bob", ["acme"], { write: true })];
    for (let i = 1; i <= 3; i++) await pickup.register(bob, "acme", { key: `bob-${i}`, title: `Bob ${i}`, status: "running" });
    await pickup.register(alice, "acme", { key: "alice-1", title: "Alice 1", status: "running" });
    const el = (id: string, attrs: string) =>
      `<pickup-recent id="${id}" workspace="acme" server="${pickup.url}" token="${alice}" refresh="600" ${attrs}></pickup-recent>`;
    host.serve(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Host</title></head><body>
${el("two", 'cap="2"')}${el("five", 'cap="5"')}${el("mine", 'cap="3" filter="mine"')}
<script type="module" src="${pickup.url}/pickup.js"></script></body></html>`);
    const opened = liveRequests(page.context());
    const recent: string[] = [];
    page.on("request", (r) => r.url().endsWith(SERVER_FN.recent) && recent.push(r.postData() ?? ""));
    await page.goto(host.origin);
    for (const id of ["#two", "#five", "#mine"]) await expect(widget(page, id)).toHaveAttribute("data-live", "live");
    await expect(titles(page, "#mine")).toHaveText(["Alice 1"]);
    // Their first pages came by the one stream too (early.js): no `recent` call.
    expect(opened).toHaveLength(1);
    expect(new URL(opened[0]).searchParams.get("views")).toBe("all:5,mine:3");
    expect(recent).toEqual([]);

    await pickup.register(alice, "acme", { key: "alice-2", title: "Alice 2", status: "running" });
    await expect(titles(page, "#two")).toHaveText(["Alice 2", "Alice 1"], { timeout: 3_000 });
    await expect(titles(page, "#five")).toHaveText(["Alice 2", "Alice 1", "Bob 3", "Bob 2", "Bob 1"], { timeout: 3_000 });
    await expect(titles(page, "#mine")).toHaveText(["Alice 2", "Alice 1"], { timeout: 3_000 });
    // "Show older" under the two-card widget: its page says there is more.
    await expect(page.locator("#two .pickup-more")).toBeVisible();
    await expect(page.locator("#five .pickup-more")).toHaveCount(0);
    expect(opened).toHaveLength(1);
  } finally {
    await pickup.stop();
    await host.stop();
  }
});
