// The widget in the two engines Playwright cannot bring here: Debian's Firefox ESR, driven over
// WebDriver BiDi (puppeteer-core), and WebKitGTK's MiniBrowser, driven by WebKitWebDriver
// (selenium-webdriver) under Xvfb. In each: the home page draws its cards and goes live (an
// item registered meanwhile arrives by the stream), <pickup-recent> on a host page of another
// origin, a server that refuses the stream (501) leaves the widget polling, a refused token
// (401) and another workspace (403) are said, and a server that goes away leaves the last cards;
// on every page
// no uncaught error or unhandled rejection, and the wasm fetched once.
//
//   PICKUP_BIN=… PICKUP_SITE=… xvfb-run -a node engines/smoke.mjs [firefox] [webkit]
//
// Each page is reached through a proxy of this script's own, which counts what is fetched and
// adds one same-origin script (allowed by the page's CSP) that records errors for the check.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { createServer, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { itemsPath } from "../../public/contract.js";

const BIN = process.env.PICKUP_BIN;
const SITE = process.env.PICKUP_SITE;
const ENGINES = process.argv.slice(2).length ? process.argv.slice(2) : ["firefox", "webkit"];
const PATIENCE_MS = 20_000;

const HOOKS = `window.__errors = [];
addEventListener("error", (e) => window.__errors.push(String(e.message || e.error)));
addEventListener("unhandledrejection", (e) => window.__errors.push("unhandled rejection: " + String(e.reason)));`;

/** A `pickup serve` on a store of its own, on a free port. */
async function pickup(env = {}) {
  const dir = mkdtempSync(join(tmpdir(), "pickup-smoke-"));
  const secret = randomBytes(32).toString("base64");
  const proc = spawn(BIN, ["serve"], {
    env: { ...process.env, PICKUP_ADDR: "127.0.0.1:0", PICKUP_STORE: `file://${dir}`, PICKUP_SITE: SITE, PICKUP_SECRET: secret, PICKUP_LOG: "error", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  const url = await new Promise((resolve, reject) => {
    proc.stdout.on("data", (chunk) => {
      out += chunk;
      const m = out.match(/listening on (http:\/\/[\d.:]+)/);
      if (m) resolve(m[1]);
    });
    proc.once("exit", (code) => reject(new Error(`pickup exited with ${code}: ${out}`)));
  });
  proc.stdout.resume();
  const token = (sub, write = false) =>
    execFileSync(BIN, ["token", "--sub", sub, "--ws", "acme", ...(write ? ["--write"] : [])], { env: { ...process.env, PICKUP_SECRET: secret } })
      .toString()
      .trim();
  const register = async (key, title) => {
    const res = await fetch(`${url}${itemsPath("acme")}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token("bot", true)}`, "content-type": "application/json" },
      body: JSON.stringify({ key, title, status: "running" }),
    });
    if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  };
  const stop = async () => {
    if (proc.exitCode === null) {
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  return { url, token, register, stop };
}

/** An HTTP server on a free loopback port; resolves to its origin and a stop function. */
async function listen(handler) {
  const server = createServer(handler);
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    stop: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  };
}

/** A proxy in front of `target` that counts the paths fetched and puts the error hooks at the
 *  top of the home page (`/__hooks.js`, same origin, so the page's CSP allows it). */
async function proxy(target) {
  const counts = new Map();
  const server = await listen((req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    if (path === "/__hooks.js") {
      res.writeHead(200, { "content-type": "text/javascript" });
      return res.end(HOOKS);
    }
    const headers = { ...req.headers, host: new URL(target).host };
    if (path === "/") delete headers["accept-encoding"];
    const up = request(`${target}${req.url}`, { method: req.method, headers }, (answer) => {
      if (path === "/" && answer.statusCode === 200) {
        let html = "";
        answer.setEncoding("utf8");
        answer.on("data", (c) => (html += c));
        answer.on("end", () => {
          const { "content-length": _, ...rest } = answer.headers;
          res.writeHead(200, rest);
          res.end(html.replace("<head>", '<head><script src="/__hooks.js"></script>'));
        });
        return;
      }
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  return { ...server, counts };
}

/** Firefox ESR over WebDriver BiDi. */
async function firefox() {
  const { default: puppeteer } = await import("puppeteer-core");
  const browser = await puppeteer.launch({ browser: "firefox", executablePath: "/usr/bin/firefox-esr", headless: true });
  const page = await browser.newPage();
  return {
    open: (url) => page.goto(url),
    eval: (expr) => page.evaluate(expr),
    close: () => browser.close(),
  };
}

/** WebKitGTK's MiniBrowser through WebKitWebDriver. */
async function webkit() {
  const { Builder } = await import("selenium-webdriver");
  const port = await new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
  // Its own process group, stopped whole: the driver starts MiniBrowser under it.
  const driverProc = spawn("WebKitWebDriver", [`--port=${port}`], { stdio: "ignore", detached: true });
  const binary = ["/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser", "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.0/MiniBrowser"].find(existsSync);
  let driver;
  for (let i = 0; !driver; i++) {
    try {
      driver = await new Builder()
        .usingServer(`http://127.0.0.1:${port}`)
        .withCapabilities({ browserName: "MiniBrowser", "webkitgtk:browserOptions": { binary, args: ["--automation"] } })
        .build();
    } catch (e) {
      if (i > 100) throw e;
      await new Promise((r) => setTimeout(r, 100)); // the driver is starting
    }
  }
  return {
    open: (url) => driver.get(url),
    eval: (expr) => driver.executeScript(`return (${expr})`),
    close: async () => {
      await driver.quit().catch(() => {});
      try {
        process.kill(-driverProc.pid, "SIGTERM");
      } catch {}
    },
  };
}

/** Evaluate `expr` in the page until it is truthy. */
async function until(browser, what, expr) {
  const deadline = Date.now() + PATIENCE_MS;
  for (;;) {
    const got = await browser.eval(expr).catch(() => null);
    if (got) return got;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${PATIENCE_MS} ms (${expr})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const TITLES = (root) => `[...${root}.querySelectorAll(".pickup-card-title")].map((e) => e.textContent).join("|")`;

async function smoke(engine, browser, say) {
  let page = "";
  const host = await listen((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(page);
  });
  const server = await pickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  const front = await proxy(server.url);
  page = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Host</title><script>${HOOKS}</script></head><body>
<pickup-recent workspace="acme" server="${front.origin}" token="${server.token("alice")}" refresh="600"></pickup-recent>
<script type="module" src="${front.origin}/pickup.js"></script></body></html>`;
  const refusing = await pickup({ PICKUP_LIVE_EVERY: "0s" });
  const refusingFront = await proxy(refusing.url);
  try {
    await server.register("first", "Smoke run");
    await refusing.register("first", "Polled run");
    const errorsOf = async (what) => {
      const errors = await browser.eval("window.__errors");
      if (!Array.isArray(errors)) throw new Error(`${what}: the error hooks did not run`);
      if (errors.length) throw new Error(`${what}: ${JSON.stringify(errors)}`);
    };
    const wasmFetches = (p) => [...p.counts].filter(([path]) => path.endsWith(".wasm")).reduce((n, [, c]) => n + c, 0);

    // The home page: its cards, live; an item registered meanwhile comes by the stream.
    front.counts.clear();
    await browser.open(`${front.origin}/#ws=acme&token=${server.token("alice")}&refresh=600`);
    await until(browser, "home page cards", `${TITLES("document")} === "Smoke run"`);
    await until(browser, "home page live", `document.querySelector("section.pickup")?.dataset.live === "live"`);
    await server.register("second", "Arrived live");
    await until(browser, "a live arrival", `${TITLES("document")} === "Arrived live|Smoke run"`);
    await errorsOf("home page");
    if (wasmFetches(front) !== 1) throw new Error(`home page: the wasm was fetched ${wasmFetches(front)} times`);
    say("home page: cards, live, a live arrival; no error; the wasm fetched once");

    // <pickup-recent> on a host page of another origin.
    front.counts.clear();
    await browser.open(host.origin);
    const shadow = `document.querySelector("pickup-recent")?.shadowRoot`;
    await until(browser, "host page cards", `(${shadow}) && ${TITLES(`(${shadow})`)} === "Arrived live|Smoke run"`);
    await until(browser, "host page live", `(${shadow})?.querySelector("section.pickup")?.dataset.live === "live"`);
    await errorsOf("host page");
    if (wasmFetches(front) !== 1) throw new Error(`host page: the wasm was fetched ${wasmFetches(front)} times`);
    say("host page: <pickup-recent> in its shadow root, live; no error; the wasm fetched once");

    // A server that refuses the stream (501): the widget polls, and nothing is thrown.
    await browser.open(`${refusingFront.origin}/#ws=acme&token=${refusing.token("alice")}&refresh=1`);
    await until(browser, "refused stream: cards", `${TITLES("document")} === "Polled run"`);
    await until(browser, "refused stream: polling", `document.querySelector("section.pickup")?.dataset.live === "polling"`);
    await refusing.register("second", "Polled too");
    await until(browser, "refused stream: a polled arrival", `${TITLES("document")} === "Polled too|Polled run"`);
    await errorsOf("refused stream (501)");
    say("refused stream (501): polling, a polled arrival; no error");

    // A token the server refuses (401): the widget says so.
    await browser.open(`${front.origin}/#ws=acme&token=not-a-token&refresh=600`);
    await until(browser, "refused token: said", `!!document.querySelector(".pickup-unauthenticated")`);
    await errorsOf("refused token (401)");
    say("refused token (401): the sign-in message; no error");

    // A token of another workspace (403): the widget says so. (Through a blank page: a link
    // that differs from the last only in its fragment would not load the page again.)
    await browser.open("about:blank");
    await browser.open(`${front.origin}/#ws=beta&token=${server.token("alice")}&refresh=600`);
    await until(browser, "forbidden: said", `!!document.querySelector(".pickup-forbidden")`);
    await errorsOf("forbidden (403)");
    say("another workspace (403): the no-access message; no error");

    // The server gone while the page is open: the last cards stay, and nothing is thrown.
    await browser.open("about:blank");
    await browser.open(`${refusingFront.origin}/#ws=acme&token=${refusing.token("alice")}&refresh=1`);
    await until(browser, "server gone: cards", `${TITLES("document")} === "Polled too|Polled run"`);
    await refusing.stop();
    await until(browser, "server gone: said", `!!document.querySelector(".pickup-stale")`);
    await errorsOf("server gone");
    say("server gone: the last cards stay, with a note; no error");
  } finally {
    await browser.open("about:blank").catch(() => {});
    for (const s of [front, refusingFront, host]) await s.stop();
    await server.stop();
    await refusing.stop();
  }
}

let failed = 0;
let passed = 0;
for (const engine of ENGINES) {
  const started = Date.now();
  const say = (line) => console.log(`engines: ${engine}: ${line}`);
  let browser;
  try {
    browser = await (engine === "firefox" ? firefox() : webkit());
    await smoke(engine, browser, say);
    passed++;
    say(`ok (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (e) {
    failed++;
    say(`FAILED: ${e.stack ?? e}`);
  } finally {
    await browser?.close().catch(() => {});
  }
}
console.log(`engines: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
