// make bench, section 4: the widget's download size and the time to its first card.
import { Browser, Page } from "@playwright/test";
import { test, expect, startPickup } from "../tests/pickup";
import { HostPage } from "../tests/host";
import { readFileSync, writeFileSync, mkdirSync, existsSync, readdirSync } from "node:fs";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { join } from "node:path";

const DIST = process.env.PICKUP_SITE ?? "../dist";
const OUT = process.env.PICKUP_BENCH_OUT ?? "../target/bench";
const LOADS = 20;

/** A built file by its unhashed name: `app.js` is `assets/app-<hash>.js` since the build hashes it. */
function built(file: string): string {
  if (existsSync(join(DIST, file))) return join(DIST, file);
  const [stem, ext] = [file.slice(0, file.indexOf(".")).replace(/_bg$/, ""), file.slice(file.indexOf("."))];
  const bg = file.includes("_bg.") ? "_bg" : "";
  const pattern = new RegExp(`^${stem}-[0-9a-f]+${bg}${ext.replace(".", "\\.")}$`);
  const found = readdirSync(join(DIST, "assets")).filter((n) => pattern.test(n));
  if (found.length !== 1) throw new Error(`${file}: expected one ${pattern} in ${DIST}/assets, found ${found.join(", ") || "none"}`);
  return join(DIST, "assets", found[0]);
}
// Brotli at its best quality, as a server or CDN would precompress static files.
const br = (file: string) =>
  brotliCompressSync(readFileSync(built(file)), { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;

const gz = (file: string) => gzipSync(readFileSync(built(file)), { level: 9 }).length;

/** Cold loads: each in a new browser context (an empty HTTP cache). */
const COLD_LOADS = 10;
/** Chrome DevTools' "Fast 3G" preset (its NetworkManager): 1.44 Mbit/s down and 675 kbit/s up,
 *  each × 0.9, and 150 ms × 3.75 of latency, added by Chromium to every request. */
const FAST_3G = { offline: false, latency: 562.5, downloadThroughput: (1.44 * 1000 * 1000) / 8 * 0.9, uploadThroughput: (675 * 1000) / 8 * 0.9 };

type Transfer = { path: string; encoding: string; bytes: number };

/** Records, in the page, when the first card entered the DOM (ms since navigation start). Read
 *  after Playwright has seen the card, whose polling would add up to a few hundred ms. */
const recordFirstCard = () => {
  new MutationObserver((_, observer) => {
    if (document.querySelector(".pickup-card[data-id]")) { // a card, not the skeleton
      (window as any).pickupFirstCard ??= performance.now();
      observer.disconnect();
    }
  }).observe(document, { childList: true, subtree: true });
};
const firstCardAt = async (page: Page): Promise<number> => {
  await page.locator(".pickup-card[data-id]").first().waitFor({ timeout: 60_000 });
  return page.evaluate(() => (window as any).pickupFirstCard as number);
};

/** One cold load of `url` until the first card: ms since navigation start, and what crossed the
 *  wire (CDP's encodedDataLength: bytes received for each finished request, headers included). */
async function coldLoad(browser: Browser, url: string, throttle: boolean): Promise<{ ms: number; transfers: Transfer[] }> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.addInitScript(recordFirstCard);
    const cdp = await context.newCDPSession(page);
    await cdp.send("Network.enable");
    if (throttle) await cdp.send("Network.emulateNetworkConditions", FAST_3G);
    const seen = new Map<string, { path: string; encoding: string }>();
    const transfers: Transfer[] = [];
    cdp.on("Network.responseReceived", (e) => {
      const h = Object.fromEntries(Object.entries(e.response.headers).map(([k, v]) => [k.toLowerCase(), String(v)]));
      seen.set(e.requestId, { path: new URL(e.response.url).pathname, encoding: h["content-encoding"] ?? "identity" });
    });
    cdp.on("Network.loadingFinished", (e) => {
      const r = seen.get(e.requestId);
      if (r) transfers.push({ ...r, bytes: e.encodedDataLength });
    });
    await page.goto(url);
    const ms = await firstCardAt(page);
    return { ms, transfers };
  } finally {
    await context.close();
  }
}

const medianOf = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const tenth = (ms: number) => Math.round(ms * 10) / 10;

/** Bytes on the wire for a cold load, and the first card over cold loads unthrottled and on Fast 3G. */
async function cold(browser: Browser, url: string) {
  const unthrottled: number[] = [];
  const fast3g: number[] = [];
  let first: Transfer[] = [];
  for (let i = 0; i < COLD_LOADS; i++) {
    const load = await coldLoad(browser, url, false);
    if (i === 0) first = load.transfers;
    unthrottled.push(load.ms);
  }
  for (let i = 0; i < COLD_LOADS; i++) fast3g.push((await coldLoad(browser, url, true)).ms);
  return {
    cold: {
      wire_bytes: first.reduce((sum, t) => sum + t.bytes, 0),
      transfers: first,
      first_card_ms: unthrottled.map(tenth),
      median_first_card_ms: tenth(medianOf(unthrottled)),
      fast_3g_first_card_ms: fast3g.map(tenth),
      median_fast_3g_first_card_ms: tenth(medianOf(fast3g)),
      loads: COLD_LOADS,
    },
  };
}

/** The same for a host page: <pickup-recent> draws in its shadow root, which a MutationObserver
 *  on the document does not see; each shadow root is observed as it is attached. */
const recordFirstCardInShadow = () => {
  const attach = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (init) {
    const root = attach.call(this, init);
    new MutationObserver((_, observer) => {
      if (root.querySelector(".pickup-card[data-id]")) {
        (window as any).pickupFirstCard ??= performance.now();
        observer.disconnect();
      }
    }).observe(root, { childList: true, subtree: true });
    return root;
  };
};

/** A request of a load, in the order it was sent: its bytes so far (a stream still open when
 *  the first card came counts what it had received). */
type Sent = { method: string; path: string; bytes: number };

/** Records, in a host page, when its own module ran (`hostRan`, set by the page) and when the
 *  wasm had arrived (the resource timing of `…_bg.wasm`), both ms since navigation start. */
const ownPaintAt = async (page: Page): Promise<{ ran: number; wasm: number | null }> => {
  await page.waitForFunction(() => (window as any).hostRan !== undefined, undefined, { timeout: 60_000 });
  return page.evaluate(() => {
    const wasm = performance.getEntriesByType("resource").find((e) => e.name.endsWith("_bg.wasm")) as PerformanceResourceTiming | undefined;
    return { ran: (window as any).hostRan as number, wasm: wasm && wasm.responseEnd > 0 ? wasm.responseEnd : null };
  });
};

/** One cold load over Fast 3G of a host page: what `measure` reads off it, and, if `sent` is
 *  given, every request of the load in the order it was sent. */
async function hostLoad<T>(browser: Browser, url: string, measure: (page: Page) => Promise<T>, sent?: Map<string, Sent>): Promise<T> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.addInitScript(recordFirstCardInShadow);
    await page.addInitScript(recordFirstCard); // mount() draws in the host's own DOM
    const cdp = await context.newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.emulateNetworkConditions", FAST_3G);
    if (sent) {
      cdp.on("Network.requestWillBeSent", (e) => sent.set(e.requestId, { method: e.request.method, path: new URL(e.request.url).pathname, bytes: 0 }));
      cdp.on("Network.dataReceived", (e) => { const r = sent.get(e.requestId); if (r) r.bytes += e.encodedDataLength; });
      cdp.on("Network.loadingFinished", (e) => { const r = sent.get(e.requestId); if (r) r.bytes = e.encodedDataLength; });
    }
    await page.goto(url);
    return await measure(page);
  } finally {
    await context.close();
  }
}

const hostHtml = (body: string) =>
  `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Host app</title></head><body>\n<h1>Host app</h1>${body}</body></html>`;

/** A host app's page on its own origin with pickup.js from Pickup's origin, as an app embeds it
 *  (docs/EMBEDDING.md): the two-tag pattern, then every other way of giving the token, then the
 *  host's own module with and without an import of pickup.js. */
async function hostPage(browser: Browser) {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    const bot = pickup.token("bot", ["acme"], { write: true });
    for (let i = 0; i < 8; i++) await pickup.register(bot, "acme", { key: `k${i}`, title: `Item ${i}`, status: "running", progress: 0.5 });
    const token = pickup.token("alice", ["acme"]);
    const js = `${pickup.url}/pickup.js`;
    const element = `<pickup-recent id="w" workspace="acme" server="${pickup.url}"></pickup-recent>`;
    const pages: Record<string, string> = {
      "two tags": `<pickup-recent workspace="acme" server="${pickup.url}" token="${token}"></pickup-recent>
<script type="module" src="${js}"></script>`,
      "a `token` property set in the module that imports `pickup.js`": `${element}
<script type="module">import "${js}"; document.getElementById("w").token = "${token}";</script>`,
      "`getToken` set in the module that imports `pickup.js`": `${element}
<script type="module">import "${js}"; document.getElementById("w").getToken = async () => "${token}";</script>`,
      "`mount()` imported from `pickup.js`": `<div id="w"></div>
<script type="module">import { mount } from "${js}"; mount(document.getElementById("w"), { workspace: "acme", server: "${pickup.url}", token: "${token}" });</script>`,
    };
    // The ways in turn, load after load, so that whatever drifts over the run weighs on each alike.
    const firstCard: Record<string, number[]> = Object.fromEntries(Object.keys(pages).map((way) => [way, []]));
    let requests: Sent[] = [];
    for (let i = 0; i < COLD_LOADS; i++) {
      for (const [way, body] of Object.entries(pages)) {
        host.serve(hostHtml(body));
        const sent = i === 0 && way === "two tags" ? new Map<string, Sent>() : undefined;
        firstCard[way].push(tenth(await hostLoad(browser, host.origin, firstCardAt, sent)));
        if (sent) requests = [...sent.values()];
      }
    }
    const { "two tags": twoTags, ...ways } = firstCard;
    const others = Object.entries(ways).map(([way, ms]) => ({ way, fast_3g_first_card_ms: ms, median_fast_3g_first_card_ms: tenth(medianOf(ms)) }));
    // The host's own code: a module that paints a paragraph, with and without importing
    // pickup.js (and a widget on the page) first.
    const own = `document.body.insertAdjacentHTML("beforeend", "<p>The host's own content</p>"); window.hostRan = performance.now();`;
    const ownPaint: Record<string, { ran: number[]; wasm: (number | null)[] }> = {};
    for (const [name, body] of [
      ["without", `<script type="module">${own}</script>`],
      ["with", `${element}<script type="module">import "${js}"; document.getElementById("w").token = "${token}"; ${own}</script>`],
    ]) {
      host.serve(hostHtml(body));
      const loads = { ran: [] as number[], wasm: [] as (number | null)[] };
      for (let i = 0; i < COLD_LOADS; i++) {
        // The wasm's arrival is read once the card is in (the wasm may still be on its way when the host's code ran).
        const { ran, wasm } = await hostLoad(browser, host.origin, async (page) => {
          if (name === "with") {
            await firstCardAt(page);
            await page.waitForFunction(() => performance.getEntriesByType("resource").some((e) => e.name.endsWith("_bg.wasm") && (e as PerformanceResourceTiming).responseEnd > 0), undefined, { timeout: 60_000 });
          }
          return ownPaintAt(page);
        });
        loads.ran.push(tenth(ran));
        loads.wasm.push(wasm === null ? null : tenth(wasm));
      }
      ownPaint[name] = loads;
    }
    return {
      fast_3g_first_card_ms: twoTags,
      median_fast_3g_first_card_ms: tenth(medianOf(twoTags)),
      loads: COLD_LOADS,
      requests,
      ways: others,
      own_paint: ownPaint,
    };
  } finally {
    await pickup.stop();
    await host.stop();
  }
}

test("widget size and time to first card", async ({ page, pickup, browser }) => {
  test.setTimeout(600_000);
  const bot = pickup.token("bot", ["acme"], { write: true });
  for (let i = 0; i < 8; i++) await pickup.register(bot, "acme", { key: `k${i}`, title: `Item ${i}`, status: "running", progress: 0.5 });
  const url = pickup.home("acme", pickup.token("alice", ["acme"]));
  const times: number[] = [];
  await page.addInitScript(recordFirstCard);
  for (let i = 0; i < LOADS; i++) {
    await page.goto("about:blank"); // a real navigation each time, not a fragment change
    await page.goto(url);
    times.push(await firstCardAt(page));
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
    ...(await cold(browser, url)),
    host: await hostPage(browser),
  };
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, "widget.json"), JSON.stringify(result, null, 2));
  console.log(JSON.stringify(result));
  expect(times.length).toBe(LOADS);
});
