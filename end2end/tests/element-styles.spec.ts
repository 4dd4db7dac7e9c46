// The element's shadow root keeps a host's CSS out (Bootstrap's and Tailwind's preflight, from
// npm, as real host pages load them) and its own in: the widget's computed styles and its
// pixels are the same with and without them. What a host may style goes through the
// --pickup-* custom properties and ::part().
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Page } from "@playwright/test";
import { test, expect, startPickup, Pickup } from "./pickup";
import { HostPage } from "./host";
import { PNG } from "pngjs";

/** Pixels that differ between two screenshots of one size (pixelmatch, which Playwright's own
 *  screenshot comparison uses: the edges of glyphs and rounded corners, drawn a shade apart at
 *  another position on the page, do not count). */
async function differingPixels(a: Buffer, b: Buffer): Promise<number> {
  const { default: pixelmatch } = await import("pixelmatch");
  const [pa, pb] = [PNG.sync.read(a), PNG.sync.read(b)];
  expect([pb.width, pb.height]).toEqual([pa.width, pa.height]);
  return pixelmatch(pa.data, pb.data, null, pa.width, pa.height, { threshold: 0.1 });
}

const require_ = createRequire(__filename);
const BOOTSTRAP = readFileSync(require_.resolve("bootstrap/dist/css/bootstrap.min.css"), "utf8");
const PREFLIGHT = readFileSync(require_.resolve("tailwindcss/preflight.css"), "utf8");

const PARTS = ["header", "toggle", "card", "title", "badge", "progress", "dismiss"];
const PROPS = ["font-family", "font-size", "font-weight", "font-style", "line-height", "color", "background-color", "margin-top", "padding-top", "padding-left", "border-top-width", "border-top-style", "box-sizing", "text-decoration-line", "letter-spacing", "word-spacing", "text-transform", "text-align"];

function hostPage(pickup: Pickup, token: string, css: string) {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Host app</title><style>${css}</style></head><body>
<div style="width: 380px"><pickup-recent workspace="acme" server="${pickup.url}" token="${token}" refresh="600"></pickup-recent></div>
<script type="module" src="${pickup.url}/pickup.js"></script></body></html>`;
}

/** Each part's computed styles, by part name (the first element of each). */
async function styles(page: Page) {
  return page.evaluate(
    ([parts, props]) => {
      const root = document.querySelector("pickup-recent")!.shadowRoot!;
      const out: Record<string, Record<string, string>> = {};
      for (const part of parts) {
        const el = root.querySelector(`[part~="${part}"]`);
        if (!el) throw new Error(`no part ${part}`);
        const cs = getComputedStyle(el);
        out[part] = Object.fromEntries(props.map((p) => [p, cs.getPropertyValue(p)]));
      }
      return out;
    },
    [PARTS, PROPS] as const,
  );
}

async function load(page: Page, host: HostPage, html: string) {
  host.serve(html);
  await page.goto(host.origin);
  await expect(page.locator("pickup-recent .pickup-card")).toHaveCount(2);
  await page.evaluate(() => document.fonts.ready);
  // Its stylesheet in the shadow root has loaded: the card has its border.
  await expect(page.locator("pickup-recent .pickup-card").first()).toHaveCSS("border-top-style", "solid");
}

test("Bootstrap, Tailwind's preflight and a hostile host's rules change nothing in the widget; ::part and --pickup-* do", async ({ page }) => {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    const bot = pickup.token("bot", ["acme"], { name: "CI bot", write: true });
    await pickup.register(bot, "acme", { key: "a", title: "Nightly training", status: "running", progress: 0.4, url: "/runs/1" });
    await pickup.register(bot, "acme", { key: "b", title: "Upload interviews", status: "failed" });
    const token = pickup.token("alice", ["acme"]);
    await page.setViewportSize({ width: 600, height: 600 });

    await load(page, host, hostPage(pickup, token, ""));
    const plain = await styles(page);
    const plainShot = await page.locator("pickup-recent").screenshot({ animations: "disabled" });

    // A hostile host: rules on every element, on body and on the element itself, important
    // ones too, of properties that inherit (they came in through the host element before).
    const HOSTILE = `* { letter-spacing: 4px !important; line-height: 3 !important; word-spacing: 9px !important; font-style: italic !important; }
body { font-size: 24px !important; text-transform: uppercase !important; text-align: right !important; }
pickup-recent { font-size: 30px; color: rgb(255, 0, 0) !important; font-weight: 900 !important; }`;
    for (const css of [BOOTSTRAP, PREFLIGHT, BOOTSTRAP + PREFLIGHT, HOSTILE]) {
      await load(page, host, hostPage(pickup, token, css));
      expect(await styles(page)).toEqual(plain);
      const shot = await page.locator("pickup-recent").screenshot({ animations: "disabled" });
      expect(await differingPixels(plainShot, shot)).toBe(0);
    }

    // The host's own elements are not styled by the widget's stylesheet.
    await load(page, host, hostPage(pickup, token, "") .replace("<body>", `<body><ul class="pickup-list"><li class="pickup-card" id="mine">host's own</li></ul>`));
    await expect(page.locator("#mine")).toHaveCSS("border-top-style", "none");

    // What a host may style: a custom property on the element, and a part.
    await load(page, host, hostPage(pickup, token, `pickup-recent { --pickup-accent: rgb(255, 0, 0); } pickup-recent::part(card) { border-color: rgb(0, 128, 0); } .pickup-card { border-color: rgb(0, 0, 255); }`));
    await expect(page.locator("pickup-recent .pickup-progress-fill")).toHaveCSS("fill", "rgb(255, 0, 0)");
    await expect(page.locator("pickup-recent .pickup-card").first()).toHaveCSS("border-top-color", "rgb(0, 128, 0)");
  } finally {
    await pickup.stop();
    await host.stop();
  }
});
