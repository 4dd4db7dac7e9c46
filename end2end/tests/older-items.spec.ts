// Older items on demand: past the cap, "Show older" appends the next page below the first.
import AxeBuilder from "@axe-core/playwright";
import { test, expect, titles, SERVER_FN } from "./pickup";

/** Register `n` running items, oldest first ("Item 0" is the oldest). Keys sort newest first
 * too, so two registered in the same millisecond still list in the order they were made. */
async function seed(pickup, n: number) {
  const bot = pickup.token("bot", ["acme"], { write: true });
  for (let i = 0; i < n; i++) {
    await pickup.register(bot, "acme", { key: `k${String(99 - i).padStart(2, "0")}`, title: `Item ${i}`, status: "running" });
  }
  return bot;
}

const items = (...n: number[]) => n.map((i) => `Item ${i}`);

test("Show older appends the next items, page by page, until there are no more", async ({ page, pickup }) => {
  await seed(pickup, 7);
  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])) + "&cap=3");
  await expect(titles(page)).toHaveText(items(6, 5, 4));
  const older = page.getByRole("button", { name: "Show older" });

  const next = page.waitForRequest((r) => r.url().endsWith(SERVER_FN.recent) && JSON.parse(r.postData() ?? "{}").before);
  await older.click();
  // The cursor is the last card's id.
  const lastId = await page.locator(".pickup-card").nth(2).getAttribute("data-id");
  expect(JSON.parse((await next).postData()!).before).toBe(lastId);
  await expect(titles(page)).toHaveText(items(6, 5, 4, 3, 2, 1));
  await expect(older).toBeVisible();
  const results = await new AxeBuilder({ page }).analyze();
  expect(results.violations, JSON.stringify(results.violations, null, 1)).toEqual([]);

  await older.click();
  await expect(titles(page)).toHaveText(items(6, 5, 4, 3, 2, 1, 0));
  await expect(older).toBeHidden();
});

test("the first page keeps refreshing below a new item without losing the older cards shown", async ({ page, pickup }) => {
  const bot = await seed(pickup, 5);
  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])) + "&cap=3&refresh=1");
  await expect(titles(page)).toHaveText(items(4, 3, 2));
  await page.getByRole("button", { name: "Show older" }).click();
  await expect(titles(page)).toHaveText(items(4, 3, 2, 1, 0));
  await expect(page.getByRole("button", { name: "Show older" })).toBeHidden();

  // A new item pushes "Item 2" off the first page: it stays, between the pages, once.
  await pickup.register(bot, "acme", { key: "k00", title: "Item 5", status: "running" });
  await expect(titles(page)).toHaveText(items(5, 4, 3, 2, 1, 0), { timeout: 5_000 });
  // A new run of an older card's key: the newer run is on the first page, the older card goes.
  await pickup.register(bot, "acme", { key: "k99", title: "Item 0, run 2", status: "running" });
  await expect(titles(page)).toHaveText(["Item 0, run 2", ...items(5, 4, 3, 2, 1)], { timeout: 5_000 });
});
