// make bench, section "Live": how soon a teammate's item is on screen through another server,
// and what live costs the store and the server with many viewers.
import { test, expect, startPickup, Pickup, livePath } from "../tests/pickup";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const OUT = process.env.PICKUP_BENCH_OUT ?? "../target/bench";
const REGISTRATIONS = 20;
const SUBSCRIBERS = 500;
const IDLE_STREAMS = 1000;
const WINDOW_S = 30;
const CAP = 8;

/** The server's resident memory, in MB (VmRSS). */
const rssMb = (pid: number) => {
  const kb = Number(readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+)/)![1]);
  return Math.round((kb / 1024) * 10) / 10;
};

/** Store requests so far, by kind, from the server's `/metrics`. */
async function storeRequests(p: Pickup): Promise<Record<string, number>> {
  const text = await (await fetch(p.metricsUrl!)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^pickup_store_requests_total\{op="(\w+)"\} (\d+)/gm)) out[m[1]] = Number(m[2]);
  return out;
}

/** Open `n` live streams of `ws`; resolves once each has had its first page. */
async function openStreams(p: Pickup, token: string, n: number) {
  const controllers: AbortController[] = [];
  const firstPages: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    const abort = new AbortController();
    controllers.push(abort);
    firstPages.push(
      (async () => {
        const res = await fetch(`${p.url}${livePath("acme")}?cap=${CAP}`, {
          headers: { authorization: `Bearer ${token}` },
          signal: abort.signal,
        });
        expect(res.status).toBe(200);
        const reader = res.body!.getReader();
        let text = "";
        let first = true;
        // Keep reading (as a browser would), resolving at the first page.
        return new Promise<void>((resolve) => {
          (async () => {
            try {
              for (;;) {
                const { done, value } = await reader.read();
                if (done) return;
                text += new TextDecoder().decode(value);
                if (first && text.includes("event: page")) {
                  first = false;
                  resolve();
                }
              }
            } catch {
              /* aborted at the end */
            }
          })();
        });
      })(),
    );
  }
  await Promise.all(firstPages);
  return () => controllers.forEach((c) => c.abort());
}

test("live: latency through another server, and the cost of many viewers", async ({ browser }) => {
  test.setTimeout(300_000);
  // 1. From the 201 on server A to the card on a viewer's screen on server B, one store.
  const a = await startPickup({ PICKUP_LIVE_EVERY: "1s" });
  const b = await a.twin({ PICKUP_LIVE_EVERY: "1s" });
  const writer = a.token("ada", ["acme"], { write: true });
  const page = await (await browser.newContext()).newPage();
  // Polling every 10 minutes: only the stream can explain a card.
  await page.goto(b.home("acme", b.token("bob", ["acme"])) + "&refresh=600");
  await expect(page.locator("section.pickup")).toHaveAttribute("data-live", "live");
  const latencies: number[] = [];
  for (let i = 0; i < REGISTRATIONS; i++) {
    const title = `Run ${i}`;
    await a.register(writer, "acme", { key: `k${i}`, title, status: "running" });
    const at201 = Date.now();
    const shown = await page.waitForFunction(
      (title) =>
        [...document.querySelectorAll(".pickup-card-title")].some((e) => e.textContent === title) && Date.now(),
      title,
      { polling: "raf", timeout: 10_000 },
    );
    latencies.push((await shown.jsonValue()) - at201);
  }
  await b.stop();
  await a.stop();
  const sorted = [...latencies].sort((x, y) => x - y);
  const p95 = sorted[Math.ceil(0.95 * sorted.length) - 1];

  // 2. Many viewers of one workspace on one server: store requests per second and memory.
  const s = await startPickup({
    PICKUP_STORE: "memory://",
    PICKUP_LIVE_EVERY: "1s",
    PICKUP_METRICS_ADDR: "127.0.0.1:0",
    PICKUP_MAX_CONNECTIONS: "4096",
    // One viewer's token stands for all of them: the limits that keep one member or one
    // workspace from holding every stream are lifted, so the store's side alone is measured.
    PICKUP_MAX_STREAMS_PER_VIEWER: "2000",
    PICKUP_MAX_STREAMS_PER_WORKSPACE: "2000",
  });
  const bot = s.token("bot", ["acme"], { write: true });
  for (let i = 0; i < 30; i++) await s.register(bot, "acme", { key: `k${i}`, title: `Item ${i}`, status: "running" });
  const viewer = s.token("viewer", ["acme"]);
  const rssIdle = rssMb(s.pid);
  let close = await openStreams(s, viewer, SUBSCRIBERS);
  const before = await storeRequests(s);
  const t0 = Date.now();
  await new Promise((r) => setTimeout(r, WINDOW_S * 1000)); // the measurement window itself
  const after = await storeRequests(s);
  const seconds = (Date.now() - t0) / 1000;
  const rate = (op: string) => Math.round((((after[op] ?? 0) - (before[op] ?? 0)) / seconds) * 100) / 100;
  const rssSubscribed = rssMb(s.pid);
  close();
  close = await openStreams(s, viewer, IDLE_STREAMS);
  const rssIdleStreams = rssMb(s.pid);
  close();
  await s.stop();

  const result = {
    registrations: REGISTRATIONS,
    latency_ms: latencies,
    p95_latency_ms: p95,
    median_latency_ms: sorted[Math.floor(sorted.length / 2)],
    live_every_s: 1,
    cap: CAP,
    subscribers: SUBSCRIBERS,
    window_s: Math.round(seconds * 10) / 10,
    listings_per_s: rate("list"),
    record_reads_per_s: rate("get"),
    store_requests_per_s: Object.fromEntries(Object.keys(after).map((op) => [op, rate(op)])),
    rss_mb_no_streams: rssIdle,
    rss_mb_subscribed: rssSubscribed,
    idle_streams: IDLE_STREAMS,
    rss_mb_idle_streams: rssIdleStreams,
  };
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, "live.json"), JSON.stringify(result, null, 2));
  console.log(JSON.stringify(result));
  expect(latencies.length).toBe(REGISTRATIONS);
});
