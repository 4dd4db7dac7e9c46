// <pickup-recent> in real host apps: a React 19 and a Vue 3 app (end2end/hosts/), built by Vite
// from npm, each served from its own origin with a backend that mints the viewer's tokens, and
// driven in Chromium: cards, a live update, token renewal through getToken, pickup:open, a
// route change that unmounts the element (its stream closed on the server), and re-mounting.
import { createServer, Server } from "node:http";
import { AddressInfo } from "node:net";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import { test, expect, startPickup, Pickup } from "./pickup";

const built: Record<string, string> = {};

test.beforeAll(async () => {
  const { build } = await import("vite");
  for (const app of ["react", "vue"]) {
    const outDir = mkdtempSync(join(tmpdir(), `pickup-${app}-`));
    await build({ root: join(__dirname, "..", "hosts", app), logLevel: "warn", build: { outDir, emptyOutDir: true, target: "esnext" } });
    built[app] = outDir;
  }
});
test.afterAll(() => {
  for (const dir of Object.values(built)) rmSync(dir, { recursive: true, force: true });
});

/** The app's origin: its built files, any other path its index.html (client-side routes), and
 *  /token, which mints a token of `ttl` for alice as the app's backend would. */
async function serveApp(dir: string, mint: () => string): Promise<{ origin: string; stop: () => Promise<void> }> {
  const types: Record<string, string> = { ".js": "text/javascript", ".html": "text/html", ".css": "text/css" };
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url!, "http://x").pathname;
    if (path === "/token") {
      res.writeHead(200, { "content-type": "text/plain" });
      return res.end(mint());
    }
    const file = join(dir, path);
    const found = path !== "/" && existsSync(file) ? file : join(dir, "index.html");
    res.writeHead(200, { "content-type": types[extname(found)] ?? "application/octet-stream" });
    res.end(readFileSync(found));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, stop: () => new Promise((r) => server.close(() => r())) };
}


for (const app of ["react", "vue"]) {
  test(`a ${app} host app: cards, live, renewal, pickup:open, unmount on a route change, re-mount`, async ({ page }) => {
    // Tokens of 3 s: renewed through getToken while the test runs.
    let pickup: Pickup | undefined;
    const site = await serveApp(built[app], () => pickup!.token("alice", ["acme"], { ttl: "3s" }));
    pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: site.origin, PICKUP_METRICS_ADDR: "127.0.0.1:0" });
    try {
      const bot = pickup.token("bot", ["acme"], { name: "CI bot", write: true });
      await pickup.register(bot, "acme", { key: "one", title: "Nightly training", status: "running", url: "/runs/1" });
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      await page.goto(`${site.origin}/?pickup=${encodeURIComponent(pickup.url)}`);
      const widget = page.locator("pickup-recent");
      await expect(widget.locator(".pickup-title")).toHaveText("Recent in acme");
      await expect(widget.locator(".pickup-card-title")).toHaveText(["Nightly training"]);
      await expect(widget.locator("section.pickup")).toHaveAttribute("data-live", "live");
      await expect.poll(() => pickup!.streams()).toBe(1);

      // Live, and still live past two renewals of the 3 s token.
      await expect.poll(() => page.evaluate(() => (window as any).tokens), { timeout: 15_000 }).toBeGreaterThanOrEqual(3);
      await pickup.register(bot, "acme", { key: "two", title: "Upload interviews", status: "queued" });
      await expect(widget.locator(".pickup-card-title")).toHaveText(["Upload interviews", "Nightly training"]);
      await expect(widget.locator(".pickup-unauthenticated")).toHaveCount(0);

      await widget.locator("a.pickup-card-title").click();
      await expect.poll(() => page.evaluate(() => (window as any).opened)).toEqual([{ id: expect.any(String), key: "one", url: "/runs/1" }]);

      // The route change unmounts the element: its stream closes on the server.
      await page.getByRole("button", { name: "Settings" }).click();
      await expect(page.getByRole("heading", { name: "Settings" })).toBeVisible();
      await expect(widget).toHaveCount(0);
      await expect.poll(() => pickup!.streams()).toBe(0);

      // Back: a new element, mounted and streaming again.
      await page.getByRole("button", { name: "Dashboard" }).click();
      await expect(widget.locator(".pickup-card-title")).toHaveText(["Upload interviews", "Nightly training"]);
      await expect.poll(() => pickup!.streams()).toBe(1);
      expect(errors).toEqual([]);
    } finally {
      await pickup.stop();
      await site.stop();
    }
  });
}
