// Dismissing a card: gone for the one who dismissed it, still there for everyone else.
import { test, expect, titles, SERVER_FN } from "./pickup";

test("dismiss hides the card for the one who dismissed it only", async ({ browser, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { write: true });
  await pickup.register(bot, "acme", { key: "shared", title: "Shared run", status: "running" });
  await pickup.register(bot, "acme", { key: "other", title: "Other run", status: "queued" });
  const [a, b] = [await browser.newContext(), await browser.newContext()];
  const [pa, pb] = [await a.newPage(), await b.newPage()];
  await pa.goto(pickup.home("acme", pickup.token("alice", ["acme"])));
  await pb.goto(pickup.home("acme", pickup.token("bob", ["acme"])));
  await expect(pa.locator(".pickup-card")).toHaveCount(2);

  const done = pa.waitForResponse((r) => r.url().endsWith(SERVER_FN.dismiss));
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
