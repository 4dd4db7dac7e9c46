// "Since you looked": what changed after the viewer's last look is marked, on every device of
// theirs, until they mark it seen on one of them.
import { test, expect, SERVER_FN } from "./pickup";
import type { Page } from "@playwright/test";
import AxeBuilder from "@axe-core/playwright";

const marks = (page: Page) => page.locator("section.pickup:not([data-pickup-drawn]) .pickup-card[data-since]");
const card = (page: Page, title: string) =>
  page.locator("section.pickup:not([data-pickup-drawn])").getByRole("listitem", { name: title });

test("marks follow the viewer from one device to another, until Mark seen on one", async ({ browser, pickup }) => {
  const alice = pickup.token("alice", ["acme"]);
  const bot = pickup.token("bot", ["acme"], { write: true });
  const build = await pickup.register(bot, "acme", { key: "build", title: "Nightly build", status: "running" });

  // A first visit: the look is taken at the first page, and nothing is marked.
  const laptop = await browser.newContext();
  const onLaptop = await laptop.newPage();
  const firstLook = onLaptop.waitForResponse((r) => r.url().endsWith(SERVER_FN.look));
  await onLaptop.goto(pickup.home("acme", alice));
  await expect(card(onLaptop, "Nightly build")).toBeVisible();
  expect((await firstLook).status()).toBe(200);
  await expect(marks(onLaptop)).toHaveCount(0);

  // While she is there: a new item, and the build ends. Both are marked as they arrive.
  await pickup.register(bot, "acme", { key: "export", title: "Export", status: "queued" });
  await pickup.update(bot, "acme", build.id, { title: "Nightly build", status: "failed" });
  await expect(card(onLaptop, "Export")).toHaveAttribute("data-since", "new");
  await expect(card(onLaptop, "Nightly build")).toHaveAttribute("data-since", "finished");
  await expect(card(onLaptop, "Export").getByText("New", { exact: true })).toBeVisible();
  await expect(card(onLaptop, "Nightly build").getByText("Finished since you looked")).toBeVisible();
  await expect(onLaptop.getByText("2 changes since you looked")).toBeVisible();
  await expect(onLaptop).toHaveTitle("(1) Pickup");
  // The marks, the count, Mark seen and the bell on screen: no axe violation, light or dark.
  for (const colorScheme of ["light", "dark"] as const) {
    await onLaptop.emulateMedia({ colorScheme });
    const results = await new AxeBuilder({ page: onLaptop }).analyze();
    expect(results.violations, `${colorScheme}: ${JSON.stringify(results.violations, null, 1)}`).toEqual([]);
  }

  // Her phone: the same marks, from the look kept under her own key.
  const phone = await browser.newContext();
  const onPhone = await phone.newPage();
  await onPhone.goto(pickup.home("acme", alice));
  await expect(card(onPhone, "Export")).toHaveAttribute("data-since", "new");
  await expect(card(onPhone, "Nightly build")).toHaveAttribute("data-since", "finished");

  // Another viewer has looks of their own.
  const bob = await browser.newContext();
  const onBob = await bob.newPage();
  await onBob.goto(pickup.home("acme", pickup.token("bob", ["acme"])));
  await expect(card(onBob, "Export")).toBeVisible();
  await expect(marks(onBob)).toHaveCount(0);

  // Mark seen on the laptop: gone there at once, and on the phone at its next visit.
  // By keyboard: the button goes with the marks, and focus stays in the widget.
  const seen = onLaptop.waitForResponse((r) => r.url().endsWith(SERVER_FN.look));
  await onLaptop.getByRole("button", { name: "Mark seen" }).focus();
  await onLaptop.keyboard.press("Enter");
  expect((await seen).status()).toBe(200);
  await expect(onLaptop.getByRole("heading", { name: "Pick up where you left off" })).toBeFocused();
  await expect(marks(onLaptop)).toHaveCount(0);
  await expect(onLaptop.getByText(/since you looked/)).toHaveCount(0);
  await expect(onLaptop).toHaveTitle("Pickup");
  await onPhone.reload();
  await expect(card(onPhone, "Export")).toBeVisible();
  await expect(marks(onPhone)).toHaveCount(0);

  // What changes after the look is marked again.
  await pickup.register(bot, "acme", { key: "deploy", title: "Deploy", status: "running" });
  await expect(card(onPhone, "Deploy")).toHaveAttribute("data-since", "new");
  await expect(onPhone.getByText("1 change since you looked")).toBeVisible();
  await laptop.close();
  await phone.close();
  await bob.close();
});
