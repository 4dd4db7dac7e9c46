// Live: a teammate's item on the screen within a second or two, with polling out of the picture,
// and the widget's fallbacks when the stream cannot be had.
import { test, expect, countRecentAnswers, SERVER_FN, livePath } from "./pickup";

const titles = (page) => page.locator(".pickup-card-title");
// The widget itself, not the drawing that stands in for it until the wasm has drawn.
const widget = (page) => page.locator("section.pickup:not([data-pickup-drawn])");

/** Make the page hidden or visible, as switching tabs does. */
async function setHidden(page, hidden: boolean) {
  await page.evaluate((hidden) => {
    Object.defineProperty(document, "hidden", { value: hidden, configurable: true });
    Object.defineProperty(document, "visibilityState", { value: hidden ? "hidden" : "visible", configurable: true });
    document.dispatchEvent(new Event("visibilitychange"));
  }, hidden);
}

test("a teammate's new item arrives live, with polling set to ten minutes", async ({ page, pickup }) => {
  const alice = pickup.token("alice", ["acme"], { name: "Alice", write: true });
  await page.goto(pickup.home("acme", pickup.token("bob", ["acme"])) + "&refresh=600");
  await expect(widget(page)).toHaveAttribute("data-live", "live");
  await expect(page.locator(".pickup-empty")).toBeVisible();

  const item = await pickup.register(alice, "acme", { key: "fresh", title: "Alice's fresh run", status: "running" });
  await expect(titles(page)).toHaveText(["Alice's fresh run"], { timeout: 3_000 });
  await expect(page.getByRole("status").filter({ hasText: "New: Alice's fresh run" })).toBeAttached();
  // A status change and a removal arrive the same way.
  await pickup.update(alice, "acme", item.id, { title: "Alice's fresh run", status: "succeeded", progress: 1 });
  await expect(page.locator(".pickup-badge")).toHaveText(["succeeded"], { timeout: 3_000 });
});

test("a blocked stream falls back to polling, says so quietly, and recovers", async ({ page, pickup }) => {
  const alice = pickup.token("alice", ["acme"], { write: true });
  await page.route(`**${livePath("acme")}?*`, (route) => route.abort());
  await page.goto(pickup.home("acme", pickup.token("bob", ["acme"])) + "&refresh=2");
  await expect(widget(page)).toHaveAttribute("data-live", "polling");
  await pickup.register(alice, "acme", { key: "polled", title: "Found by polling", status: "running" });
  await expect(titles(page)).toHaveText(["Found by polling"], { timeout: 5_000 });

  await page.unroute(`**${livePath("acme")}?*`);
  // The stream is tried again with back-off (a few seconds after the first failures).
  await expect(widget(page)).toHaveAttribute("data-live", "live", { timeout: 20_000 });
});

test("a hidden tab closes its stream and catches up when shown", async ({ page, pickup }) => {
  const alice = pickup.token("alice", ["acme"], { write: true });
  await page.goto(pickup.home("acme", pickup.token("bob", ["acme"])) + "&refresh=600");
  await expect(widget(page)).toHaveAttribute("data-live", "live");

  const closed = page.waitForEvent("requestfailed", (r) => r.url().includes(`${livePath("acme")}?`));
  await setHidden(page, true);
  await closed;
  await pickup.register(alice, "acme", { key: "meanwhile", title: "Made while hidden", status: "running" });
  await setHidden(page, false);
  await expect(titles(page)).toHaveText(["Made while hidden"], { timeout: 3_000 });
  await expect(widget(page)).toHaveAttribute("data-live", "live");
});

test("a token that expires ends the stream and shows the sign-in message", async ({ page, pickup }) => {
  await page.goto(pickup.home("acme", pickup.token("bob", ["acme"], { ttl: "3s" })) + "&refresh=600");
  await expect(page.locator(".pickup-empty")).toBeVisible();
  await expect(page.locator(".pickup-unauthenticated")).toBeVisible({ timeout: 10_000 });
});

test("a fetch answered after a newer stream page does not take that page's cards away", async ({ page, pickup }) => {
  const alice = pickup.token("alice", ["acme"], { write: true });
  const answers = await countRecentAnswers(page);
  await page.goto(pickup.home("acme", pickup.token("bob", ["acme"])) + "&refresh=600");
  await expect(widget(page)).toHaveAttribute("data-live", "live");
  await expect(page.locator(".pickup-empty")).toBeVisible();

  // The next fetch is answered by the server now (no cards yet) and reaches the page later.
  let reached: () => void;
  const atTheServer = new Promise<void>((r) => (reached = r));
  let release: () => void;
  const released = new Promise<void>((r) => (release = r));
  await page.route(`**${SERVER_FN.recent}*`, async (route) => {
    const response = await route.fetch();
    reached();
    await released;
    await route.fulfill({ response });
  });
  const handled = await answers.read();
  await page.locator(".pickup-refresh").click();
  await atTheServer;
  await pickup.register(alice, "acme", { key: "fresh", title: "Alice's fresh run", status: "running" });
  await expect(titles(page)).toHaveText(["Alice's fresh run"], { timeout: 3_000 });

  release!();
  await answers.after(handled);
  await expect(titles(page)).toHaveText(["Alice's fresh run"], { timeout: 1 });
});
