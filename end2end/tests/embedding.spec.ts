// The widget embedded in a host app's page: allowed origins work, others get nothing.
import { test, expect, startPickup, titles, SERVER_FN } from "./pickup";
import { HostPage } from "./host";

test("embedded in a page from an allowed origin it works; from another origin it gets nothing", async ({ page }) => {
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
    const direct = await page.evaluate(async ([url, token, recent]) => {
      try {
        await fetch(`${url}${recent}`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ ws: "acme", filter: "all" }),
        });
        return "got an answer";
      } catch {
        return "blocked";
      }
    }, [pickup.url, viewer, SERVER_FN.recent]);
    expect(direct).toBe("blocked");
  } finally {
    await pickup.stop();
    await allowed.stop();
    await other.stop();
  }
});
