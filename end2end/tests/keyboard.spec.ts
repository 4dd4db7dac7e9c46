// A keyboard user's widget: each card's elements are its item's (a keyed list), so a page that
// arrives never changes what a focused button acts on; focus after a dismiss goes to a
// neighbour, never to the page's body; "Show older" takes focus to the first older card; and
// the focus ring is seen whole.
import { Page } from "@playwright/test";
import { PNG } from "pngjs";
import { test, expect, titles } from "./pickup";

/** What has focus: its accessible label (or text), and its tag. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement!;
    return { tag: el.tagName.toLowerCase(), label: el.getAttribute("aria-label") ?? el.textContent?.trim() ?? "" };
  });

test("a focused dismiss button stays its card's when a new item arrives live", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { name: "Bot", write: true });
  const weekly = await pickup.register(bot, "acme", { key: "weekly", title: "Weekly usage report", status: "running" });
  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])));
  await expect(page.locator("section.pickup:not([data-pickup-drawn])")).toHaveAttribute("data-live", "live");
  await page.getByRole("button", { name: "Dismiss Weekly usage report" }).focus();

  await pickup.register(bot, "acme", { key: "pipeline", title: "analysis_pipeline nightly", status: "running" });
  await expect(titles(page)).toHaveText(["analysis_pipeline nightly", "Weekly usage report"]);
  expect(await focused(page)).toEqual({ tag: "button", label: "Dismiss Weekly usage report" });
  // And an update of the focused card's item changes it in place.
  await pickup.update(bot, "acme", weekly.id, { title: "Weekly usage report", status: "running", progress: 0.5 });
  await expect(page.getByRole("progressbar", { name: "Progress of Weekly usage report" })).toBeVisible();
  expect(await focused(page)).toEqual({ tag: "button", label: "Dismiss Weekly usage report" });

  await page.keyboard.press("Enter");
  await expect(titles(page)).toHaveText(["analysis_pipeline nightly"]);
});

test("after a dismiss, focus goes to the next card, else the previous one, else the heading", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { name: "Bot", write: true });
  for (const key of ["a", "b", "c"]) await pickup.register(bot, "acme", { key, title: `Run ${key}`, status: "running" });
  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])));
  await expect(titles(page)).toHaveText(["Run c", "Run b", "Run a"]);

  await page.getByRole("button", { name: "Dismiss Run b" }).focus();
  await page.keyboard.press("Enter");
  await expect(titles(page)).toHaveText(["Run c", "Run a"]);
  expect(await focused(page)).toEqual({ tag: "button", label: "Dismiss Run a" });

  await page.keyboard.press("Enter");
  await expect(titles(page)).toHaveText(["Run c"]);
  expect(await focused(page)).toEqual({ tag: "button", label: "Dismiss Run c" });

  await page.keyboard.press("Enter");
  await expect(page.locator(".pickup-empty")).toBeVisible();
  expect(await focused(page)).toEqual({ tag: "h2", label: "Pick up where you left off" });
});

test("Show older takes focus to the first older card", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { name: "Bot", write: true });
  for (const key of ["a", "b", "c"]) await pickup.register(bot, "acme", { key, title: `Run ${key}`, status: "running" });
  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])) + "&cap=2");
  await expect(titles(page)).toHaveText(["Run c", "Run b"]);
  await page.getByRole("button", { name: "Show older" }).focus();
  await page.keyboard.press("Enter");
  await expect(titles(page)).toHaveText(["Run c", "Run b", "Run a"]);
  await expect.poll(() => focused(page)).toEqual({ tag: "button", label: "Dismiss Run a" });
});

/** The pixels of `png` that are the focus ring's colour (within a few levels). */
function ringPixels(png: Buffer, [r, g, b]: number[]): number {
  const img = PNG.sync.read(png);
  let n = 0;
  for (let i = 0; i < img.data.length; i += 4) {
    const d = Math.abs(img.data[i] - r) + Math.abs(img.data[i + 1] - g) + Math.abs(img.data[i + 2] - b);
    if (d < 24) n++;
  }
  return n;
}

test("the Mine/Everyone toggle's focus ring is seen whole", async ({ page, pickup }) => {
  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])));
  await expect(page.locator(".pickup-empty")).toBeVisible();
  for (const name of ["Mine", "Everyone"]) {
    const toggle = page.getByRole("button", { name });
    await toggle.focus();
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Tab"); // focused by the keyboard: :focus-visible
    const box = (await toggle.boundingBox())!;
    const ring = await page.evaluate(() => {
      const cs = getComputedStyle(document.activeElement!);
      return { width: parseFloat(cs.outlineWidth), offset: parseFloat(cs.outlineOffset), color: cs.outlineColor };
    });
    const out = ring.width + ring.offset;
    const clip = { x: box.x - out - 2, y: box.y - out - 2, width: box.width + 2 * out + 4, height: box.height + 2 * out + 4 };
    const rgb = ring.color.match(/\d+/g)!.slice(0, 3).map(Number);
    const seen = ringPixels(await page.screenshot({ clip }), rgb);
    // The ring's whole band (at least its inner 3 px all round), not a strip of it.
    const band = 2 * (box.width + box.height + 4 * ring.offset) * ring.width;
    expect(seen, `${name}: ${seen} ring pixels of about ${Math.round(band)}`).toBeGreaterThan(band * 0.8);
  }
});
