// Pins: a card's pin keeps its item at the top of that viewer's list, above the cap, on every
// device of theirs (live), for no one else; past keep-finished too; from the keyboard, with
// focus kept on the button as its card moves; and `exclude` leaves a host page's own item out.
import AxeBuilder from "@axe-core/playwright";
import type { Browser, Page } from "@playwright/test";
import { test, expect, titles, startPickup } from "./pickup";
import { HostPage } from "./host";

const widget = (page: Page) => page.locator("section.pickup:not([data-pickup-drawn])");
const pinOf = (page: Page, title: string) => widget(page).getByRole("listitem", { name: title }).locator(".pickup-pin");
const focused = (page: Page) => page.evaluate(() => document.activeElement?.getAttribute("aria-label") ?? "");

async function device(browser: Browser, url: string) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url);
  await expect(widget(page)).toHaveAttribute("data-live", "live");
  return { context, page, errors };
}

test("a pin on one device is live on the viewer's other, and no one else's; keyboard and axe", async ({ browser, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { name: "Bot", write: true });
  for (const key of ["a", "b", "c"]) await pickup.register(bot, "acme", { key, title: `Run ${key}`, status: "running" });
  const alice = pickup.home("acme", pickup.token("alice", ["acme"])) + "&cap=2";
  const [laptop, phone] = [await device(browser, alice), await device(browser, alice)];
  const bob = await device(browser, pickup.home("acme", pickup.token("bob", ["acme"])) + "&cap=2");
  for (const d of [laptop, phone, bob]) await expect(titles(d.page)).toHaveText(["Run c", "Run b"]);

  // "Run b" from the keyboard: its card goes to the top, focus stays on its button.
  await pinOf(laptop.page, "Run b").focus();
  await expect(pinOf(laptop.page, "Run b")).toHaveAttribute("aria-pressed", "false");
  await laptop.page.keyboard.press("Enter");
  await expect(titles(laptop.page)).toHaveText(["Run b", "Run c", "Run a"]);
  await expect(pinOf(laptop.page, "Run b")).toHaveAttribute("aria-pressed", "true");
  await expect.poll(() => focused(laptop.page)).toBe("Unpin Run b");
  // The other device, live; bob's list as it was.
  await expect(titles(phone.page)).toHaveText(["Run b", "Run c", "Run a"]);
  await expect(pinOf(phone.page, "Run b")).toHaveAttribute("aria-pressed", "true");
  await expect(titles(bob.page)).toHaveText(["Run c", "Run b"]);
  await expect(pinOf(bob.page, "Run b")).toHaveAttribute("aria-pressed", "false");

  const axe = await new AxeBuilder({ page: laptop.page }).analyze();
  expect(axe.violations, JSON.stringify(axe.violations, null, 1)).toEqual([]);

  // Unpinned with a click on the other device: back among the others, everywhere.
  await pinOf(phone.page, "Run b").click();
  for (const d of [laptop, phone]) await expect(titles(d.page)).toHaveText(["Run c", "Run b"]);
  await expect.poll(() => focused(phone.page)).toBe("Pin Run b");
  for (const d of [laptop, phone, bob]) {
    expect(d.errors).toEqual([]);
    await d.context.close();
  }
});

test("a pinned item stays on its pinner's list past keep-finished, not on anyone else's", async ({ browser }) => {
  const pickup = await startPickup({ PICKUP_KEEP_FINISHED: "3s" });
  try {
    const bot = pickup.token("bot", ["acme"], { write: true });
    const item = await pickup.register(bot, "acme", { key: "done", title: "Finished run", status: "succeeded" });
    const alice = await device(browser, pickup.home("acme", pickup.token("alice", ["acme"])));
    await pinOf(alice.page, "Finished run").click();
    await expect(pinOf(alice.page, "Finished run")).toHaveAttribute("aria-pressed", "true");
    // Bob's live list loses it once keep-finished has passed (the server reads it again then)...
    const bob = await device(browser, pickup.home("acme", pickup.token("bob", ["acme"])));
    await expect(widget(bob.page).locator(".pickup-empty")).toBeVisible();
    // ... and alice's, read again, keeps it.
    await alice.page.reload();
    await expect(titles(alice.page)).toHaveText(["Finished run"]);
    await expect(pinOf(alice.page, "Finished run")).toHaveAttribute("aria-pressed", "true");
    expect(item.status).toBe("succeeded");
    for (const d of [alice, bob]) await d.context.close();
  } finally {
    await pickup.stop();
  }
});

test("exclude on a host page leaves its own item out, still shows cap others, and follows the attribute", async ({ page }) => {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    const bot = pickup.token("bot", ["acme"], { write: true });
    const ids: Record<string, string> = {};
    for (const key of ["a", "b", "c"]) ids[key] = (await pickup.register(bot, "acme", { key, title: `Run ${key}`, status: "running" })).id;
    host.serve(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Run c</title></head><body>
<pickup-recent workspace="acme" server="${pickup.url}" token="${pickup.token("alice", ["acme"])}" cap="2" exclude="${ids.c}"></pickup-recent>
<script type="module" src="${pickup.url}/pickup.js"></script></body></html>`);
    await page.goto(host.origin);
    await expect(titles(page)).toHaveText(["Run b", "Run a"]);
    await page.locator("pickup-recent").evaluate((el, id) => el.setAttribute("exclude", id), ids.b);
    await expect(titles(page)).toHaveText(["Run c", "Run a"]);
    await page.locator("pickup-recent").evaluate((el) => el.removeAttribute("exclude"));
    await expect(titles(page)).toHaveText(["Run c", "Run b"]);
  } finally {
    await pickup.stop();
    await host.stop();
  }
});
