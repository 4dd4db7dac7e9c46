// Accessibility: no axe violations of any impact in light and dark, at 1280 and 320 CSS px and at
// 200 % zoom, on the home page, on a host page and in the drawing before the wasm; and
// everything works from the keyboard.
import AxeBuilder from "@axe-core/playwright";
import { Page } from "@playwright/test";
import { test, expect, titles, startPickup, Pickup, holdWasm, recentPath } from "./pickup";
import { HostPage } from "./host";

/** Every status a card can show, a link, progress, and a stalled run. */
async function seed(pickup: Pickup) {
  const bot = pickup.token("bot", ["acme"], { name: "Bot", write: true });
  const stalled = await pickup.register(bot, "acme", { key: "stalled", title: "Stalled run", status: "running" });
  for (const [key, status] of [["ok", "succeeded"], ["bad", "failed"], ["stop", "cancelled"], ["wait", "queued"]]) {
    await pickup.register(bot, "acme", { key, title: `A ${status} run`, status });
  }
  await pickup.register(bot, "acme", { key: "link", title: "Linked run", url: "/runs/1", status: "running", progress: 0.4 });
  return stalled;
}

async function noViolations(page: Page, what: string) {
  const results = await new AxeBuilder({ page }).analyze();
  expect(results.violations, `${what}: ${JSON.stringify(results.violations, null, 1)}`).toEqual([]);
}

// 1280 and 320 CSS px, and a 1280 px window at 200 % zoom (640 CSS px, 2 device px each).
const SIZES = [
  { name: "1280 px", width: 1280, height: 900, scale: 1 },
  { name: "320 px", width: 320, height: 900, scale: 1 },
  { name: "200 % zoom", width: 640, height: 450, scale: 2 },
];

// One test per size and colour scheme (each four axe runs: two pages, before the wasm and after),
// run in parallel: eight axe runs in one test took longer than its timeout on a busy machine.
test.describe.configure({ mode: "parallel" });

for (const size of SIZES) {
  for (const scheme of ["light", "dark"] as const) {
    test(`no axe violations of any impact at ${size.name}, ${scheme}, home and host page, before the wasm and after`, async ({ browser }) => {
      const host = await HostPage.start();
      const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin, PICKUP_STALE_AFTER: "2s" });
      try {
        await seed(pickup);
        const alice = pickup.token("alice", ["acme"], { name: "Alice" });
        // Until the server calls the first run stalled (its heartbeat older than 2 s), so every
        // drawing shows a stalled badge too.
        const recent = async () => {
          const res = await fetch(`${pickup.url}${recentPath("acme")}`, { headers: { authorization: `Bearer ${alice}` } });
          return ((await res.json()).cards as any[]).filter((c) => c.stalled).length;
        };
        await expect.poll(recent, { timeout: 15_000 }).toBeGreaterThan(0);
        host.serve(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Host app</title></head><body><main><h1>Host app</h1>
<pickup-recent workspace="acme" server="${pickup.url}" token="${alice}" refresh="600"></pickup-recent></main>
<script type="module" src="${pickup.url}/pickup.js"></script></body></html>`);
        const pages = [
          { name: "home page", url: pickup.home("acme", alice), cards: ".pickup-card" },
          { name: "host page", url: host.origin, cards: "pickup-recent .pickup-card" },
        ];
        const context = await browser.newContext({ viewport: { width: size.width, height: size.height }, deviceScaleFactor: size.scale, colorScheme: scheme });
        try {
          for (const p of pages) {
            const page = await context.newPage();
            const wasm = await holdWasm(page);
            await page.goto(p.url);
            await expect(page.locator(p.cards)).toHaveCount(6);
            await expect(page.locator(`${p.cards}[data-status="stalled"]`).first()).toBeVisible();
            await noViolations(page, `${p.name}, ${scheme}, ${size.name}, drawn before the wasm`);
            await wasm.release();
            await expect(page.getByRole("button", { name: "Refresh" })).toBeEnabled();
            await noViolations(page, `${p.name}, ${scheme}, ${size.name}`);
            await page.close();
          }
        } finally {
          await context.close();
        }
      } finally {
        await pickup.stop();
        await host.stop();
      }
    });
  }
}

test("no accessibility violations, and everything works from the keyboard", async ({ page, pickup }) => {
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
