// The site's pages under their Content-Security-Policy: the widget works with scripts from its
// own origin only, and a script smuggled into a served page does not run.
import { Page } from "@playwright/test";
import { test, expect } from "./pickup";
import { HostPage } from "./host";

/** Every CSP violation and console error of the page, from before its first script. */
async function watch(page: Page): Promise<{ violations: () => Promise<string[]>; errors: string[] }> {
  const errors: string[] = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.addInitScript(() => {
    (window as any).__violations = [];
    document.addEventListener("securitypolicyviolation", (e) =>
      (window as any).__violations.push(`${e.effectiveDirective} ${e.blockedURI}`),
    );
  });
  return { violations: () => page.evaluate(() => (window as any).__violations), errors };
}

test("the home page renders its cards under the CSP, with no violation", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { name: "Bot", write: true });
  await pickup.register(bot, "acme", { key: "a", title: "With progress", status: "running", progress: 0.4 });
  await pickup.register(bot, "acme", { key: "b", title: "Queued", status: "queued" });
  const seen = await watch(page);
  const res = await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])));
  const csp = res!.headers()["content-security-policy"];
  // The page's own inline script (public/home.js) by its hash, and no other.
  expect(csp).toMatch(/script-src 'self' 'wasm-unsafe-eval' 'sha256-[A-Za-z0-9+/]{43}=';/);
  expect(csp).not.toContain("unsafe-inline");
  await expect(page.locator(".pickup-card-title")).toHaveText(["Queued", "With progress"]);
  // The progress bar's fill is as wide as its value, by an attribute: no style, no script.
  await expect(page.locator(".pickup-progress-fill")).toHaveAttribute("width", /^[1-9]\d*%$/);
  expect(await page.locator(".pickup-progress-fill").evaluate((r) => (r as SVGGraphicsElement).getBBox().width)).toBeGreaterThan(0);
  await page.getByRole("button", { name: "Refresh" }).click();
  await expect(page.locator(".pickup-card")).toHaveCount(2);
  expect(await seen.violations()).toEqual([]);
  expect(seen.errors).toEqual([]);
});

test("an inline script injected into a served page is blocked", async ({ page, pickup }) => {
  // As if stored text had made it into the page's HTML: the server's own headers, CSP included.
  await page.route(`${pickup.url}/`, async (route) => {
    const res = await route.fetch();
    const html = (await res.text()).replace(
      "</body>",
      `<script>window.__pwned = "inline";</script><img src="/favicon.svg" onload="window.__pwned = 'handler'"></body>`,
    );
    const headers = { ...res.headers() };
    delete headers["content-encoding"];
    delete headers["content-length"];
    await route.fulfill({ status: res.status(), headers, body: html });
  });
  const seen = await watch(page);
  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])));
  await expect(page.locator(".pickup-empty")).toBeVisible();
  expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
  const violations = await seen.violations();
  expect(violations.filter((v) => v.startsWith("script-src")).length).toBeGreaterThanOrEqual(2);
});

test("the embed page loads the widget from beside itself, whatever its URL names", async ({ page, pickup }) => {
  const other = await HostPage.start();
  try {
    other.serve("export const mount = () => { window.__pwned = true; };");
    const bot = pickup.token("bot", ["acme"], { write: true });
    await pickup.register(bot, "acme", { key: "e", title: "Seen from the embed page", status: "running" });
    const viewer = pickup.token("alice", ["acme"]);
    const scripts: string[] = [];
    page.on("request", (r) => r.resourceType() === "script" && scripts.push(r.url()));
    const seen = await watch(page);

    // Same origin by default: it works under its CSP.
    await page.goto(`${pickup.url}/embed.html#ws=acme&token=${viewer}`);
    await expect(page.locator(".pickup-card-title")).toHaveText(["Seen from the embed page"]);
    expect(await seen.violations()).toEqual([]);

    // A fragment naming another server chooses where the API calls go, never where code comes from.
    await page.goto("about:blank");
    await page.goto(`${pickup.url}/embed.html#server=${other.origin}&ws=acme&token=${viewer}`);
    await expect(page.locator(".pickup")).toBeVisible();
    expect(scripts.filter((u) => !u.startsWith(pickup.url))).toEqual([]);
    expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
  } finally {
    await other.stop();
  }
});
