// Accessibility: no axe violations in light and dark, and everything works from the keyboard.
import AxeBuilder from "@axe-core/playwright";
import { test, expect, titles } from "./pickup";

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
