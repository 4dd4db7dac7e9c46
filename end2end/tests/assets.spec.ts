// The widget's files as a browser gets them on a cold load: the Brotli copies the build wrote,
// content-hashed names kept for a year, the stable loader revalidated, and a working widget.
import { Response } from "@playwright/test";
import { test, expect } from "./pickup";

test("a cold load gets Brotli, hashed files kept for a year, and a working widget", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { write: true });
  await pickup.register(bot, "acme", { key: "a", title: "Compressed", status: "running" });
  const site: Response[] = [];
  page.on("response", (r) => {
    if (!new URL(r.url()).pathname.startsWith("/api/")) site.push(r);
  });
  // A fresh page of a fresh context: nothing cached.
  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])));
  // The widget's own card, not the server's drawing of it (drawn before the wasm is asked for).
  const widget = page.locator("section.pickup:not([data-pickup-drawn])");
  await expect(widget.locator(".pickup-card-title")).toHaveText(["Compressed"]);
  await expect(page.locator(".pickup-card")).toHaveCount(1);

  const byPath = new Map(site.map((r) => [new URL(r.url()).pathname, r]));
  const one = (pattern: RegExp) => {
    const paths = [...byPath.keys()].filter((p) => pattern.test(p));
    expect(paths, `${pattern} among ${[...byPath.keys()].join(", ")}`).toHaveLength(1);
    return byPath.get(paths[0])!;
  };
  const wasm = one(/^\/assets\/app-[0-9a-f]+_bg\.wasm$/);
  const glue = one(/^\/assets\/app-[0-9a-f]+\.js$/);
  const css = one(/^\/assets\/pickup-[0-9a-f]+\.css$/);
  for (const r of [wasm, glue, css]) {
    const h = await r.allHeaders();
    expect(r.status(), r.url()).toBe(200);
    expect(h["content-encoding"], r.url()).toBe("br");
    expect(h["vary"], r.url()).toContain("accept-encoding");
    expect(h["cache-control"], r.url()).toBe("public, max-age=31536000, immutable");
  }
  // The wasm body really is the module (the browser undid the Brotli it was sent).
  const body = await wasm.body();
  expect([...body.subarray(0, 4)]).toEqual([0x00, 0x61, 0x73, 0x6d]);

  for (const path of ["/", "/pickup.js"]) {
    const r = byPath.get(path)!;
    expect(r, `${path} was loaded`).toBeTruthy();
    const h = await r.allHeaders();
    expect(h["content-encoding"], path).toBe("br");
    expect(h["cache-control"], path).toBe("no-cache");
    expect(h["last-modified"], path).toBeTruthy();
  }
  // The stable stylesheet is not fetched a second time beside the hashed one.
  expect(byPath.has("/pickup.css")).toBe(false);
});

test("the stable pickup.css a host page may link is revalidated, not kept", async ({ page, pickup }) => {
  const res = await page.request.get(`${pickup.url}/pickup.css`, { headers: { "accept-encoding": "gzip" } });
  expect(res.status()).toBe(200);
  expect(res.headers()["content-encoding"]).toBe("gzip");
  expect(res.headers()["cache-control"]).toBe("no-cache");
  expect(await res.text()).toContain("--pickup-");
  const again = await page.request.get(`${pickup.url}/pickup.css`, {
    headers: { "accept-encoding": "gzip", "if-modified-since": res.headers()["last-modified"] },
  });
  expect(again.status()).toBe(304);
});
