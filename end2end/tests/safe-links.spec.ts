// A card's title is a link only for a URL the server would accept (the contract's rule,
// app/src/contract/link.rs, which the server writes by): both renderers, the server's drawing of
// the first page (app/src/components/drawing.rs) and the wasm widget, apply that rule again to
// what the store holds (the widget with the browser's own URL parser), and show a record that
// fails it as text. The records are written straight into the
// store, past the API that refuses them on input.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Page } from "@playwright/test";
import { test, expect, holdWasm } from "./pickup";

/** Stored url → the link the card must show, or null for text. */
const CASES: [string, string | null][] = [
  ["/\\evil.example", null],
  [" \t/\\evil.example\t ", null],
  ["\t//evil.example ", null],
  ["https://evil.example\\@good.example", null],
  ["javascript:alert(1)", null],
  ["https://", null],
  ["/runs/\u202Etxt.exe", null],
  ["https://good.example/runs/1", "https://good.example/runs/1"],
  // Spaces and tabs around an acceptable URL: the server would have trimmed them.
  [" \t/runs/42\t ", "/runs/42"],
];

/** Every file under `dir`. */
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : [join(dir, n)]));
}

/** Each card's title: its link, or null when it is text. In the order of CASES. */
async function links(page: Page): Promise<(string | null)[]> {
  return page.evaluate((n) => {
    const out: (string | null)[] = [];
    for (let i = 0; i < n; i++) {
      const title = [...document.querySelectorAll(".pickup-card-title")].find((t) => t.textContent === `Case ${i}`)!;
      out.push(title.tagName === "A" ? title.getAttribute("href") : null);
    }
    return out;
  }, CASES.length);
}

test("both renderers link only what the server's URL rule accepts; other stored URLs are text", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { write: true });
  for (const [i] of CASES.entries())
    await pickup.register(bot, "acme", { key: `case-${i}`, title: `Case ${i}`, status: "running", url: `/placeholder-${i}` });
  // Written into the records as they lie in the file store, with the server stopped so that
  // nothing it holds in memory answers for them.
  await pickup.stop();
  let rewritten = 0;
  for (const file of files(pickup.storeDir)) {
    const text = readFileSync(file, "utf8");
    const m = text.match(/"\/placeholder-(\d+)"/);
    if (!m) continue;
    writeFileSync(file, text.replace(m[0], () => JSON.stringify(CASES[Number(m[1])][0])));
    rewritten++;
  }
  expect(rewritten).toBeGreaterThanOrEqual(CASES.length);
  await pickup.restart();
  const expected = CASES.map(([, link]) => link);
  const viewer = pickup.token("alice", ["acme"]);

  // The drawing: the wasm is held until the drawing has been checked.
  const wasm = await holdWasm(page);
  await page.goto(pickup.home("acme", viewer) + `&cap=${CASES.length}`);
  await expect(page.locator("[data-pickup-drawn] .pickup-card")).toHaveCount(CASES.length);
  expect(await links(page)).toEqual(expected);

  // The widget, once it has replaced the drawing.
  await wasm.release();
  await expect(page.locator("[data-pickup-drawn]")).toHaveCount(0);
  await expect(page.locator(".pickup-card")).toHaveCount(CASES.length);
  expect(await links(page)).toEqual(expected);
});
