// The widget as teammates and host apps use it, in real Chromium against a real server.
import AxeBuilder from "@axe-core/playwright";
import { test, expect, startPickup } from "./pickup";
import { HostPage } from "./host";
import { mkdirSync } from "node:fs";

const titles = (page) => page.locator(".pickup-card-title");

test("1. shows at most N cards, newest first, one per sub-key", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { write: true });
  for (let i = 0; i < 11; i++) {
    await pickup.register(bot, "acme", { key: `k${i}`, title: `Item ${i}`, status: "running" });
  }
  await pickup.register(bot, "acme", { key: "k3", title: "Item 3, run 2", status: "running" });

  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])) + "&cap=5");
  await expect(titles(page)).toHaveText(["Item 3, run 2", "Item 10", "Item 9", "Item 8", "Item 7"]);
  await expect(page.locator(".pickup-more")).toBeVisible();
});

test("2. a teammate's new item appears without reloading, within one refresh period", async ({ browser, pickup }) => {
  const alice = pickup.token("alice", ["acme"], { name: "Alice", write: true });
  const bob = pickup.token("bob", ["acme"], { name: "Bob" });
  const [a, b] = [await browser.newContext(), await browser.newContext()];
  const [pa, pb] = [await a.newPage(), await b.newPage()];
  await pa.goto(pickup.home("acme", alice) + "&refresh=2");
  await pb.goto(pickup.home("acme", bob) + "&refresh=2");
  await expect(pb.locator(".pickup-empty")).toBeVisible();

  await pickup.register(alice, "acme", { key: "fresh", title: "Alice's fresh run", status: "running" });
  // One refresh period (2 s) plus a second for the call and the render; no reload.
  await expect(pb.locator(".pickup-card-title")).toHaveText(["Alice's fresh run"], { timeout: 3_000 });
  await expect(pb.locator(".pickup-owner")).toHaveText(["Alice"]);
  await expect(pb.getByRole("status").filter({ hasText: "New: Alice's fresh run" })).toBeAttached();
  await a.close();
  await b.close();
});

test("3. dismiss hides the card for the one who dismissed it only", async ({ browser, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { write: true });
  await pickup.register(bot, "acme", { key: "shared", title: "Shared run", status: "running" });
  await pickup.register(bot, "acme", { key: "other", title: "Other run", status: "queued" });
  const [a, b] = [await browser.newContext(), await browser.newContext()];
  const [pa, pb] = [await a.newPage(), await b.newPage()];
  await pa.goto(pickup.home("acme", pickup.token("alice", ["acme"])));
  await pb.goto(pickup.home("acme", pickup.token("bob", ["acme"])));
  await expect(pa.locator(".pickup-card")).toHaveCount(2);

  const done = pa.waitForResponse((r) => r.url().endsWith("/api/dismiss"));
  await pa.getByRole("button", { name: "Dismiss Shared run" }).click();
  expect((await done).status()).toBe(200);
  await expect(titles(pa)).toHaveText(["Other run"]);
  await pa.reload();
  await expect(titles(pa)).toHaveText(["Other run"]);
  await pb.getByRole("button", { name: "Refresh" }).click();
  await expect(titles(pb)).toHaveText(["Other run", "Shared run"]);
  await a.close();
  await b.close();
});

test("4. embedded in a page from an allowed origin it works; from another origin it gets nothing", async ({ page }) => {
  const allowed = await HostPage.start();
  const other = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: allowed.origin });
  try {
    const bot = pickup.token("bot", ["acme"], { write: true });
    await pickup.register(bot, "acme", { key: "embedded", title: "Seen from the host app", status: "running" });
    const viewer = pickup.token("alice", ["acme"]);
    allowed.embed(pickup.url, "acme", viewer);
    other.embed(pickup.url, "acme", viewer);

    await page.goto(allowed.origin);
    await expect(titles(page)).toHaveText(["Seen from the host app"]);

    const blocked = page.waitForEvent("requestfailed", (r) => r.url().endsWith("/pickup.js"));
    await page.goto(other.origin);
    await blocked;
    await expect(page.locator(".pickup-card")).toHaveCount(0);
    const direct = await page.evaluate(async ([url, token]) => {
      try {
        await fetch(`${url}/api/recent`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/x-www-form-urlencoded" },
          body: "ws=acme&filter=all",
        });
        return "got an answer";
      } catch {
        return "blocked";
      }
    }, [pickup.url, viewer]);
    expect(direct).toBe("blocked");
  } finally {
    await pickup.stop();
    await allowed.stop();
    await other.stop();
  }
});

test("5. a token without the workspace shows the non-member message and no cards", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { write: true });
  await pickup.register(bot, "acme", { key: "secret", title: "Members only", status: "running" });
  await page.goto(pickup.home("acme", pickup.token("mallory", ["beta"])));
  await expect(page.locator(".pickup-forbidden")).toContainText("not a member");
  await expect(page.locator(".pickup-card")).toHaveCount(0);
});

test("6. with the server stopped the last cards stay with a note; restarted, it recovers", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { write: true });
  await pickup.register(bot, "acme", { key: "steady", title: "Steady run", status: "running" });
  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])) + "&refresh=1");
  await expect(titles(page)).toHaveText(["Steady run"]);

  await pickup.stop();
  await expect(page.locator(".pickup-stale")).toBeVisible({ timeout: 5_000 });
  await expect(titles(page)).toHaveText(["Steady run"]);

  await pickup.restart();
  await pickup.register(bot, "acme", { key: "after", title: "After the restart", status: "running" });
  // Back-off doubles the wait after each failure (1 s, 2 s, 4 s, …): recovery is automatic.
  await expect(page.locator(".pickup-stale")).toBeHidden({ timeout: 20_000 });
  await expect(titles(page)).toHaveText(["After the restart", "Steady run"]);
});

test("7. no accessibility violations, and everything works from the keyboard", async ({ page, pickup }) => {
  const alice = pickup.token("alice", ["acme"], { name: "Alice", write: true });
  const bot = pickup.token("bot", ["acme"], { name: "Bot", write: true });
  await pickup.register(bot, "acme", { key: "theirs", title: "Bot's run", url: "/runs/1", status: "running", progress: 0.4 });
  await pickup.register(alice, "acme", { key: "mine", title: "Alice's run", url: "https://example.com/r/2", status: "queued" });
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(pickup.home("acme", alice));
    await expect(page.locator(".pickup-card")).toHaveCount(2);
    const results = await new AxeBuilder({ page }).analyze();
    expect(results.violations, `${scheme}: ${JSON.stringify(results.violations, null, 1)}`).toEqual([]);
  }

  // Keyboard only: Tab to "Mine", Enter; Tab to a dismiss button, Enter.
  const tabTo = async (name: string) => {
    for (let i = 0; i < 30; i++) {
      await page.keyboard.press("Tab");
      const focused = await page.evaluate(() => document.activeElement?.getAttribute("aria-label") || document.activeElement?.textContent);
      if (focused?.trim() === name) return;
    }
    throw new Error(`could not reach ${name} with Tab`);
  };
  await tabTo("Mine");
  await page.keyboard.press("Enter");
  await expect(page.getByRole("button", { name: "Mine" })).toHaveAttribute("aria-pressed", "true");
  await expect(titles(page)).toHaveText(["Alice's run"]);
  await tabTo("Everyone");
  await page.keyboard.press("Enter");
  await expect(titles(page)).toHaveText(["Alice's run", "Bot's run"]);
  await tabTo("Dismiss Bot's run");
  await page.keyboard.press("Enter");
  await expect(titles(page)).toHaveText(["Alice's run"]);
  await tabTo("Refresh");
  await page.keyboard.press("Enter");
  await expect(titles(page)).toHaveText(["Alice's run"]);
});

test("8. screenshots: light, dark and narrow", async ({ page, pickup }) => {
  const people = { ada: "Ada", linus: "Linus", grace: "Grace", you: "You" };
  const t = (sub: string) => pickup.token(sub, ["acme"], { name: people[sub], write: true });
  const items: [string, string, string, number | null, string][] = [
    ["reindex", "Re-index search", "failed", null, "linus"],
    ["churn", "Churn analysis — EU", "succeeded", 1, "grace"],
    ["train", "Nightly model training", "running", 0.62, "ada"],
    ["upload", "Upload: Q3 customer interviews", "queued", null, "you"],
    ["report", "Weekly report draft", "running", 0.3, "you"],
  ];
  for (const [key, title, status, progress, who] of items) {
    await pickup.register(t(who), "acme", { key, title, status, progress, url: `/runs/${key}` });
  }
  mkdirSync("screenshots", { recursive: true });
  const shots: [string, "light" | "dark", number][] = [["light", "light", 760], ["dark", "dark", 760], ["narrow", "light", 300]];
  for (const [name, colorScheme, width] of shots) {
    await page.setViewportSize({ width, height: 720 });
    await page.emulateMedia({ colorScheme });
    await page.goto(pickup.home("acme", t("you")));
    await expect(page.locator(".pickup-card")).toHaveCount(5);
    await page.screenshot({ path: `screenshots/${name}.png`, fullPage: true });
  }
});

test("time from navigation to the first card", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { write: true });
  for (let i = 0; i < 8; i++) await pickup.register(bot, "acme", { key: `k${i}`, title: `Item ${i}`, status: "running" });
  const url = pickup.home("acme", pickup.token("alice", ["acme"]));
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    await page.goto("about:blank"); // a real navigation each time, not a fragment change
    await page.goto(url);
    await page.locator(".pickup-card").first().waitFor();
    times.push(await page.evaluate(() => performance.now()));
  }
  times.sort((a, b) => a - b);
  console.log(`first card on screen after navigation: median ${times[2].toFixed(0)} ms (5 loads: ${times.map((t) => t.toFixed(0)).join(", ")})`);
  expect(times.length).toBe(5);
});
