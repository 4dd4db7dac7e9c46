// A stream the server refuses reaches the widget as what it is, with no uncaught error in the
// page; and a tab is shown the shared stream's pages (public/share.js) only with a token of its
// own that the server takes.
import { Page } from "@playwright/test";
import { test, expect, startPickup, titles, livePath, recentPath } from "./pickup";

// The widget itself, not the drawing that stands in for it until the wasm has drawn.
const widget = (page: Page) => page.locator("section.pickup:not([data-pickup-drawn])");

/** Uncaught errors and unhandled rejections of `page`, from now on. */
function uncaught(page: Page): string[] {
  const seen: string[] = [];
  page.on("pageerror", (e) => seen.push(String(e)));
  return seen;
}

test("a tab whose own token the server refuses is not shown the shared stream's pages", async ({ page }) => {
  const pickup = await startPickup();
  try {
    const alice = pickup.token("alice", ["acme"], { name: "Alice", write: true });
    const good = pickup.token("bob", ["acme"]);
    // The same viewer's claims (so the same group of tabs), but expired, or not signed by
    // the server.
    const short = pickup.token("bob", ["acme"], { ttl: "1s" });
    const recent = (token: string) =>
      fetch(`${pickup.url}${recentPath("acme")}`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
    await expect.poll(() => recent(short)).toBe(401);
    const forged = good.slice(0, -4) + (good.endsWith("AAAA") ? "BBBB" : "AAAA");
    expect(await recent(forged)).toBe(401);

    const errors = uncaught(page);
    await page.goto(pickup.home("acme", good) + "&refresh=600");
    await expect(widget(page)).toHaveAttribute("data-live", "live");
    const others: Page[] = [];
    for (const token of [short, forged]) {
      const tab = await page.context().newPage();
      errors.push(...uncaught(tab));
      await tab.goto(pickup.home("acme", token) + "&refresh=600");
      others.push(tab);
    }
    // Each says why, as it would alone.
    for (const tab of others) await expect(tab.locator(".pickup-unauthenticated")).toBeVisible();

    for (const [key, title] of [["one", "First run"], ["two", "Second run"]]) {
      await pickup.register(alice, "acme", { key, title, status: "running" });
    }
    await expect(titles(page)).toHaveText(["Second run", "First run"]);
    for (const tab of others) {
      await expect(tab.locator(".pickup-card")).toHaveCount(0);
      await expect(widget(tab)).not.toHaveAttribute("data-live", "live");
      await expect(tab.locator(".pickup-unauthenticated")).toBeVisible();
    }
    expect(errors).toEqual([]);
  } finally {
    await pickup.stop();
  }
});

test("a refused stream (501, 503) leaves the widget polling, with no uncaught error", async ({ page }) => {
  for (const env of [{ PICKUP_LIVE_EVERY: "0s" }, { PICKUP_MAX_STREAMS: "1" }]) {
    const pickup = await startPickup(env);
    try {
      const bot = pickup.token("bot", ["acme"], { name: "Bot", write: true });
      await pickup.register(bot, "acme", { key: "one", title: "Polled", status: "running" });
      const errors = uncaught(page);
      if (env.PICKUP_MAX_STREAMS) {
        // The server's one stream, taken by another viewer: this one is refused 503 busy.
        const other = pickup.token("carol", ["acme"]);
        const held = new AbortController();
        const res = await fetch(`${pickup.url}${livePath("acme")}`, { headers: { authorization: `Bearer ${other}` }, signal: held.signal });
        expect(res.status).toBe(200);
        await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])) + "&refresh=1");
        await expect(titles(page)).toHaveText(["Polled"]);
        await expect(widget(page)).toHaveAttribute("data-live", "polling");
        held.abort();
        await res.body?.cancel().catch(() => {});
      } else {
        await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])) + "&refresh=1");
        await expect(titles(page)).toHaveText(["Polled"]);
        await expect(widget(page)).toHaveAttribute("data-live", "polling");
      }
      // A later change still arrives, by polling.
      await pickup.register(bot, "acme", { key: "two", title: "Polled too", status: "running" });
      await expect(titles(page)).toHaveText(["Polled too", "Polled"]);
      expect(errors, JSON.stringify(env)).toEqual([]);
      await page.goto("about:blank");
    } finally {
      await pickup.stop();
    }
  }
});
