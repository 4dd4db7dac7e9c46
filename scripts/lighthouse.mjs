// make bench, section 10: Lighthouse's mobile run (its default: a phone's screen, a slow 4G link
// and a slow CPU, simulated) of the home page, opened from the link `pickup demo` prints, on
// loopback, in Debian's Chromium, headless. The first run is a first visit; the demo's items keep
// changing, so the later runs are a returning viewer's, with changes since the last look. Writes
// each run's performance score, CLS, LCP, FCP, TBT and Speed Index, and their medians, to
// target/bench/lighthouse.json (BENCHMARKS.md, section 10), and fails when the median performance
// is below 95 (issue 47.2).
//   PICKUP_BIN=target/release/pickup node scripts/lighthouse.mjs
// Lighthouse is installed once into .tools, at LIGHTHOUSE_VERSION (12: the last for Node 20).
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";

const LIGHTHOUSE_VERSION = "12.8.2";
const RUNS = 3;
const TARGET = 95;
const BIN = process.env.PICKUP_BIN ?? "target/release/pickup";
const CHROME = process.env.CHROME_PATH ?? process.env.CHROMIUM ?? "/usr/bin/chromium";
// As the Playwright suite starts it (end2end/playwright.config.ts): nothing of Chromium's own
// reaches for the network, which is closed here.
const CHROME_FLAGS = "--headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync";
const LIGHTHOUSE = ".tools/node_modules/.bin/lighthouse";
process.chdir(new URL("..", import.meta.url).pathname);

const version = () => {
  try {
    return execFileSync(LIGHTHOUSE, ["--version"]).toString().trim();
  } catch {
    return null;
  }
};
if (version() !== LIGHTHOUSE_VERSION) {
  console.log(`lighthouse: installing ${LIGHTHOUSE_VERSION} into .tools`);
  execFileSync("npm", ["install", "--silent", "--no-audit", "--no-fund", "--save-exact", "--prefix", ".tools", `lighthouse@${LIGHTHOUSE_VERSION}`], { stdio: "inherit" });
}

/** `pickup demo` on a free port of loopback, its own store and secret: the link it prints. */
async function demo(store) {
  const secret = randomBytes(32).toString("hex");
  const proc = spawn(BIN, ["demo", "--addr", "127.0.0.1:0", "--store", `file://${store}`, "--site", "dist"], {
    env: { ...process.env, PICKUP_SECRET: secret, PICKUP_LOG: "warn" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  const link = await new Promise((resolve, reject) => {
    proc.stdout.on("data", (chunk) => {
      out += chunk;
      const m = out.match(/open (http:\/\/\S+)/);
      if (m) resolve(m[1]);
    });
    proc.once("exit", (code) => reject(new Error(`pickup demo exited with ${code}: ${out}`)));
  });
  return { proc, link };
}

const work = mkdtempSync(join(tmpdir(), "pickup-lighthouse-"));
const { proc, link } = await demo(join(work, "store"));
const runs = [];
try {
  for (let i = 0; i < RUNS; i++) {
    const report = join(work, `run-${i}.json`);
    execFileSync(LIGHTHOUSE, [link, "--only-categories=performance", "--output=json", `--output-path=${report}`, "--quiet", `--chrome-flags=${CHROME_FLAGS}`], {
      env: { ...process.env, CHROME_PATH: CHROME },
      stdio: ["ignore", "inherit", "inherit"],
    });
    const r = JSON.parse(readFileSync(report, "utf8"));
    const metric = (id) => r.audits[id].numericValue;
    runs.push({
      visit: i === 0 ? "first" : "returning",
      performance: Math.round(r.categories.performance.score * 100),
      cls: metric("cumulative-layout-shift"),
      lcp_ms: metric("largest-contentful-paint"),
      fcp_ms: metric("first-contentful-paint"),
      tbt_ms: metric("total-blocking-time"),
      si_ms: metric("speed-index"),
      warnings: r.runWarnings,
      lighthouse: r.lighthouseVersion,
      chrome: r.environment.hostUserAgent.match(/Chrome\/(\S+)/)?.[1] ?? "",
    });
  }
} finally {
  if (proc.exitCode === null) await new Promise((r) => proc.once("exit", r).kill("SIGTERM"));
  rmSync(work, { recursive: true, force: true });
}

const median = (key) => runs.map((r) => r[key]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
const medians = Object.fromEntries(["performance", "cls", "lcp_ms", "fcp_ms", "tbt_ms", "si_ms"].map((k) => [k, median(k)]));
mkdirSync("target/bench", { recursive: true });
const results = { measured_at: new Date().toISOString().replace(/\.\d+Z$/, "Z"), runs: RUNS, target: TARGET, medians, each: runs };
writeFileSync("target/bench/lighthouse.json", JSON.stringify(results, null, 2) + "\n");
for (const r of runs) console.log(`lighthouse ${r.visit}: performance ${r.performance}, CLS ${r.cls.toFixed(3)}, LCP ${r.lcp_ms.toFixed(0)} ms`);
console.log(`lighthouse: median performance ${medians.performance} (target ≥ ${TARGET}), written to target/bench/lighthouse.json`);
if (medians.performance < TARGET) {
  console.error(`lighthouse: median performance ${medians.performance} is below ${TARGET}`);
  process.exit(1);
}
