// When things go wrong: a token for another workspace, a server that stops and comes back.
import { Page } from "@playwright/test";
import { test, expect, titles, countRecentAnswers, SERVER_FN, livePath, drawingPath } from "./pickup";

/** The widget's own calls only: no stream (it would show the real page), no drawing ahead (its
 *  answer would be the first page). */
const callsOnly = async (page: Page) => {
  await page.route(`**${livePath("acme")}?*`, (route) => route.abort());
  await page.route(`**${drawingPath("acme")}?*`, (route) => route.abort());
};

test("a token without the workspace shows the non-member message and no cards", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { write: true });
  await pickup.register(bot, "acme", { key: "secret", title: "Members only", status: "running" });
  await page.goto(pickup.home("acme", pickup.token("mallory", ["beta"])));
  await expect(page.locator(".pickup-forbidden")).toContainText("not a member");
  await expect(page.locator(".pickup-card")).toHaveCount(0);
});

test("with the server stopped the last cards stay with a note; restarted, it recovers", async ({ page, pickup }) => {
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

test("an answer the widget cannot read is an error, never an empty list", async ({ page, pickup }) => {
  await callsOnly(page);
  const answers = [
    // A proxy's error page.
    { status: 502, contentType: "text/html", body: "<html><h1>Bad gateway</h1></html>" },
    // A page whose card lacks its title (a server of another version, a truncating proxy).
    {
      status: 200,
      contentType: "application/json",
      body: JSON.stringify({
        cards: [{ id: "x", key: "k", status: "running", stalled: false, owner: { sub: "a", name: "A" } }],
        more: false,
        partial: false,
        generated_at: "2026-11-30T00:00:00Z",
      }),
    },
  ];
  let answer = answers[0];
  await page.route(`**${SERVER_FN.recent}`, (route) => route.fulfill(answer));
  for (answer of answers) {
    // A new document each time (the home page's token is in its fragment).
    await page.goto("about:blank");
    await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])) + "&refresh=600");
    await expect(page.locator(".pickup-error")).toContainText(`answer (${answer.status}) could not be read`);
    await expect(page.locator(".pickup-empty")).toHaveCount(0);
  }
});

test("a call that never answers does not stop the refreshes after it", async ({ page, pickup }) => {
  // The refreshes are the widget's only way to its cards.
  await callsOnly(page);
  let calls = 0;
  await page.route(`**${SERVER_FN.recent}`, async (route) => {
    // The first call hangs (a proxy that holds the connection): it is never answered.
    if (++calls > 1) await route.continue();
  });
  const bot = pickup.token("bot", ["acme"], { write: true });
  await pickup.register(bot, "acme", { key: "steady", title: "Still here", status: "running" });
  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])) + "&refresh=1");
  await expect(titles(page)).toHaveText(["Still here"], { timeout: 5_000 });
  expect(calls).toBeGreaterThan(1);
});

test("a call answered after a newer one does not take the newer one's cards away", async ({ page, pickup }) => {
  await page.route(`**${livePath("acme")}?*`, (route) => route.abort());
  const answers = await countRecentAnswers(page);
  await page.goto(pickup.home("acme", pickup.token("bob", ["acme"])) + "&refresh=600");
  await expect(page.locator(".pickup-empty")).toBeVisible();

  // The next call is answered by the server now (no cards yet) and reaches the page later.
  let reached: () => void;
  const atTheServer = new Promise<void>((r) => (reached = r));
  let release: () => void;
  const released = new Promise<void>((r) => (release = r));
  let held = false;
  await page.route(`**${SERVER_FN.recent}`, async (route) => {
    if (held) return route.continue();
    held = true;
    const response = await route.fetch();
    reached();
    await released;
    await route.fulfill({ response });
  });
  await page.locator(".pickup-refresh").click();
  await atTheServer;
  const bot = pickup.token("bot", ["acme"], { write: true });
  await pickup.register(bot, "acme", { key: "fresh", title: "A fresh run", status: "running" });
  await page.locator(".pickup-refresh").click();
  await expect(titles(page)).toHaveText(["A fresh run"]);

  const read = await answers.read();
  release!();
  await answers.after(read);
  await expect(titles(page)).toHaveText(["A fresh run"], { timeout: 1 });
});
