// A real `pickup serve` per test: its own empty file store, its own port, its own secret.
import { test as base, expect, Page, Route } from "@playwright/test";
import { spawn, execFileSync, ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
// Routes, event names, storage keys: the contract's (generated from app/src/contract/).
import { itemPath, itemsPath, SERVER_FN } from "../../public/contract.js";
export * from "../../public/contract.js";

const BIN = process.env.PICKUP_BIN ?? "../target/debug/pickup";
const SITE = process.env.PICKUP_SITE ?? "../dist";

export class Pickup {
  constructor(
    readonly url: string,
    readonly storeDir: string,
    private readonly secret: string,
    private proc: ChildProcess,
    private readonly env: Record<string, string>,
    /** `/metrics`, when started with PICKUP_METRICS_ADDR. */
    readonly metricsUrl?: string,
  ) {}

  /** The server's process id (for its memory, in benchmarks). */
  get pid(): number {
    return this.proc.pid!;
  }

  /** A second server on the same store, with the same secret. */
  async twin(env: Record<string, string> = {}): Promise<Pickup> {
    const { proc, url, metricsUrl } = await launch(this.storeDir, this.secret, env);
    return new Pickup(url, this.storeDir, this.secret, proc, env, metricsUrl);
  }

  /** Start again on the same address, store and secret (after `stop`). */
  async restart(): Promise<void> {
    const again = await launch(this.storeDir, this.secret, { ...this.env, PICKUP_ADDR: new URL(this.url).host });
    this.proc = again.proc;
  }

  /** Live streams open on the server, by its /metrics (started with PICKUP_METRICS_ADDR). */
  async streams(): Promise<number> {
    const text = await (await fetch(this.metricsUrl!)).text();
    return Number(text.match(/^pickup_live_subscribers (\S+)$/m)?.[1] ?? 0);
  }

  /** Mark an item finished, or change it, through the producer API. */
  async update(token: string, ws: string, id: string, body: Record<string, unknown>): Promise<void> {
    const res = await fetch(`${this.url}${itemPath(ws, id)}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).toBe(200);
  }

  /** `pickup token`, exactly as a script would call it. */
  token(sub: string, ws: string[], opts: { name?: string; write?: boolean; ttl?: string } = {}): string {
    const args = ["token", "--sub", sub, "--ws", ws.join(",")];
    if (opts.name) args.push("--name", opts.name);
    if (opts.write) args.push("--write");
    if (opts.ttl) args.push("--ttl", opts.ttl);
    return execFileSync(BIN, args, { env: { ...process.env, PICKUP_SECRET: this.secret } })
      .toString()
      .trim();
  }

  /** Register an item through the producer API; returns the record. */
  async register(token: string, ws: string, item: Record<string, unknown>): Promise<any> {
    const res = await fetch(`${this.url}${itemsPath(ws)}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(item),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    return res.json();
  }

  /** The link `make run` prints: workspace and token in the fragment. */
  home(ws: string, token: string): string {
    return `${this.url}/#ws=${ws}&token=${token}`;
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode === null) {
      const exited = new Promise((r) => this.proc.once("exit", r));
      this.proc.kill("SIGTERM");
      await exited;
    }
  }
}

async function launch(storeDir: string, secret: string, env: Record<string, string>) {
  const proc = spawn(BIN, ["serve"], {
    env: {
      ...process.env,
      PICKUP_ADDR: "127.0.0.1:0",
      PICKUP_STORE: `file://${storeDir}`,
      PICKUP_SITE: SITE,
      PICKUP_SECRET: secret,
      PICKUP_LOG: "warn",
      ...env,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  // The server prints its address once it is listening: no polling, no sleeps.
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    proc.stdout!.on("data", (chunk) => {
      out += chunk;
      const m = out.match(/listening on (http:\/\/[\d.:]+)/);
      if (m) resolve(m[1]);
    });
    proc.once("exit", (code) => reject(new Error(`pickup exited with ${code}: ${out}`)));
  });
  const metricsUrl = out.match(/metrics on (http:\/\/[\d.:]+\/metrics)/)?.[1];
  return { proc, url, metricsUrl };
}

export async function startPickup(env: Record<string, string> = {}): Promise<Pickup> {
  const storeDir = mkdtempSync(join(tmpdir(), "pickup-e2e-"));
  const secret = randomBytes(32).toString("hex");
  const { proc, url, metricsUrl } = await launch(storeDir, secret, env);
  return new Pickup(url, storeDir, secret, proc, env, metricsUrl);
}

export const test = base.extend<{ pickup: Pickup }>({
  pickup: async ({}, use) => {
    const p = await startPickup();
    await use(p);
    await p.stop();
    rmSync(p.storeDir, { recursive: true, force: true });
  },
});

export { expect };

/** Holds every request for the widget's wasm until `release()`, or until `until` resolves:
 *  what a page shows before the wasm has arrived. `asked` resolves once the browser has asked
 *  for it; `release()` lets it go and resolves once the route has ended. */
export async function holdWasm(page: Page, until?: Promise<void>) {
  let letGo!: () => void;
  const held = until ?? new Promise<void>((r) => (letGo = r));
  let wasAsked!: () => void;
  const asked = new Promise<void>((r) => (wasAsked = r));
  const handling: Promise<void>[] = [];
  const handler = (route: Route) => {
    wasAsked();
    const handled = held.then(() => route.continue().catch(() => {})); // the page may be gone
    handling.push(handled);
    return handled;
  };
  await page.route("**/*.wasm", handler);
  const release = async () => {
    letGo?.();
    await Promise.all(handling);
    await page.unroute("**/*.wasm", handler);
  };
  return { release, asked };
}

/** The widget's card titles: the widget's own, not those of the drawing that stands in for it
 *  until the wasm has drawn (its buttons answer nothing, so a test that clicks must wait for
 *  the widget). */
export const titles = (page: Page) => page.locator("section.pickup:not([data-pickup-drawn]) .pickup-card-title");

/** Counts the answers of /api/recent the widget has read (it reads them with Response.json()).
 *  The count goes up in a task after the body was read, so after every microtask the widget ran
 *  on it. Returns `after(n)`: resolves once more than `n` were read; and `read()`: the count. */
export async function countRecentAnswers(page: Page) {
  await page.addInitScript((recent) => {
    const json = Response.prototype.json;
    (window as any).recentRead = 0;
    Response.prototype.json = async function () {
      const body = await json.call(this);
      if (this.url.endsWith(recent)) setTimeout(() => (window as any).recentRead++, 0);
      return body;
    };
  }, SERVER_FN.recent);
  return {
    read: (): Promise<number> => page.evaluate(() => (window as any).recentRead),
    after: (n: number) => page.waitForFunction((n) => (window as any).recentRead > n, n),
  };
}
