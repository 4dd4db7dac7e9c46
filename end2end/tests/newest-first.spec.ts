// What a viewer sees first: the newest items, at most N, one card per sub-key.
import { test, expect, titles } from "./pickup";

test("shows at most N cards, newest first, one per sub-key", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { write: true });
  for (let i = 0; i < 11; i++) {
    await pickup.register(bot, "acme", { key: `k${i}`, title: `Item ${i}`, status: "running" });
  }
  await pickup.register(bot, "acme", { key: "k3", title: "Item 3, run 2", status: "running" });

  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])) + "&cap=5");
  await expect(titles(page)).toHaveText(["Item 3, run 2", "Item 10", "Item 9", "Item 8", "Item 7"]);
  await expect(page.locator(".pickup-more")).toBeVisible();
});
