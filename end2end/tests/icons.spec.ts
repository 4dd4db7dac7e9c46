// Icons that render on every machine: the bell, refresh and dismiss are inline SVG drawn in the
// widget's own colour (an emoji or a symbol a font lacks draws as an empty box: Debian's
// Chromium here has no emoji font), hidden from assistive technology, the buttons named by
// their labels alone; in the server's drawing too. Axe's experimental rule that a button's
// visible text is part of its name runs here, on; and a screenshot goes to the test's output
// (test-results/), for a person to look at.
import AxeBuilder from "@axe-core/playwright";
import { Locator, Page } from "@playwright/test";
import { test, expect, holdWasm } from "./pickup";

/** What an icon button holds: its SVG's `aria-hidden`, whether the SVG draws in the button's
 *  colour, and any text of its own (none, so that its name is its label's alone). */
const iconOf = (button: Locator) =>
  button.evaluate((b) => {
    const svg = b.querySelector("svg");
    const painted = svg && getComputedStyle(svg.querySelector("path, line, rect, circle")!);
    const colour = getComputedStyle(b).color;
    return {
      svg: !!svg,
      hidden: svg?.getAttribute("aria-hidden") ?? null,
      inColour: !!painted && (painted.stroke === colour || painted.fill === colour),
      text: (b.textContent ?? "").trim(),
    };
  });

const AN_ICON = { svg: true, hidden: "true", inColour: true, text: "" };

/** Axe's rule that a control's visible text is part of its name, on (it is experimental): no
 *  violation, and nothing it could not decide (a symbol for text, which it leaves "to review":
 *  how it flagged the bell, refresh and dismiss buttons). */
async function nameMatchesContent(page: Page, what: string) {
  const RULE = "label-content-name-mismatch";
  const results = await new AxeBuilder({ page })
    .options({ runOnly: { type: "rule", values: [RULE] }, rules: { [RULE]: { enabled: true } } })
    .analyze();
  const flagged = [...results.violations, ...results.incomplete].flatMap((r) => r.nodes.map((n) => `${r.id}: ${n.html}`));
  expect(flagged, what).toEqual([]);
  // It ran: an empty result of a rule that never ran would prove nothing.
  expect([...results.passes, ...results.inapplicable].map((r) => r.id), what).toContain(RULE);
}

test("the bell, refresh and dismiss are SVG icons in the widget's colour, named by their labels, before the wasm and after", async ({ page, pickup }, testInfo) => {
  const bot = pickup.token("bot", ["acme"], { name: "Bot", write: true });
  await pickup.register(bot, "acme", { key: "run", title: "Nightly training", status: "running", progress: 0.4 });
  const wasm = await holdWasm(page);
  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])));

  // The server's drawing, before the wasm: refresh and dismiss (it draws no bell).
  const drawn = page.locator("[data-pickup-drawn]");
  await expect(drawn.locator(".pickup-card-title")).toHaveText(["Nightly training"]);
  expect(await iconOf(drawn.getByRole("button", { name: "Refresh" }))).toEqual(AN_ICON);
  expect(await iconOf(drawn.getByRole("button", { name: "Dismiss Nightly training" }))).toEqual(AN_ICON);
  await nameMatchesContent(page, "the drawing");

  await wasm.release();
  const widget = page.locator("section.pickup:not([data-pickup-drawn])");
  await expect(widget.getByRole("button", { name: "Refresh" })).toBeEnabled();
  const bell = widget.getByRole("button", { name: "Notify me when my items finish" });
  await expect(bell).toBeVisible();
  await nameMatchesContent(page, "the widget");
  for (const button of [bell, widget.getByRole("button", { name: "Refresh" }), widget.getByRole("button", { name: "Dismiss Nightly training" })]) {
    expect(await iconOf(button)).toEqual(AN_ICON);
  }
  // No text anywhere in the widget that the page's fonts may not have: no emoji, no symbols.
  const text = await widget.evaluate((w) => w.textContent ?? "");
  expect(text.match(/[\p{Extended_Pictographic}\u2190-\u23ff\u2600-\u27bf\u00d7]/gu)).toBeNull();

  await page.screenshot({ path: testInfo.outputPath("icons.png"), clip: (await widget.boundingBox())! });
});
