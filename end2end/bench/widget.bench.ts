// make bench, section 4: the widget's download size and the time to its first card.
import { test, expect } from "../tests/pickup";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { join } from "node:path";

const DIST = process.env.PICKUP_SITE ?? "../dist";
const OUT = process.env.PICKUP_BENCH_OUT ?? "../target/bench";
const LOADS = 20;

const gz = (file: string) => gzipSync(readFileSync(join(DIST, file)), { level: 9 }).length;
// Brotli at its best quality, as a server or CDN would precompress static files.
const br = (file: string) =>
  brotliCompressSync(readFileSync(join(DIST, file)), { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;

test("widget size and time to first card", async ({ page, pickup }) => {
  test.setTimeout(120_000);
  const bot = pickup.token("bot", ["acme"], { write: true });
  for (let i = 0; i < 8; i++) await pickup.register(bot, "acme", { key: `k${i}`, title: `Item ${i}`, status: "running", progress: 0.5 });
  const url = pickup.home("acme", pickup.token("alice", ["acme"]));
  const times: number[] = [];
  for (let i = 0; i < LOADS; i++) {
    await page.goto("about:blank"); // a real navigation each time, not a fragment change
    await page.goto(url);
    await page.locator(".pickup-card").first().waitFor();
    // Milliseconds since navigation started, read as soon as the first card is in the DOM.
    times.push(await page.evaluate(() => performance.now()));
  }
  const sorted = [...times].sort((a, b) => a - b);
  const median = (sorted[LOADS / 2 - 1] + sorted[LOADS / 2]) / 2;
  const result = {
    js_gzip_bytes: gz("app.js") + gz("pickup.js"),
    wasm_gzip_bytes: gz("app_bg.wasm"),
    js_brotli_bytes: br("app.js") + br("pickup.js"),
    wasm_brotli_bytes: br("app_bg.wasm"),
    first_card_ms: times.map((t) => Math.round(t * 10) / 10),
    median_first_card_ms: Math.round(median * 10) / 10,
    loads: LOADS,
  };
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, "widget.json"), JSON.stringify(result, null, 2));
  console.log(JSON.stringify(result));
  expect(times.length).toBe(LOADS);
});
