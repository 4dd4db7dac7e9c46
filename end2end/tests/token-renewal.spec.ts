// Tokens that expire while the page stays open: the widget renews them through the host's
// getToken (ahead of expiry, and after a 401), without a reload; when getToken fails it says so.
import { Page, Request } from "@playwright/test";
import { test, expect, startPickup, titles, Pickup, SERVER_FN, livePath, recentPath, DOM_EVENT } from "./pickup";
import { HostPage } from "./host";

const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split(".")[1], "base64url").toString());
/** The `exp` claim of a JWT, in milliseconds. */
const expiry = (jwt: string) => claims(jwt).exp * 1000;
/** The `iat` claim of a JWT, in milliseconds. */
const issued = (jwt: string) => claims(jwt).iat * 1000;

/** A host page that mounts one widget with `getToken`, which calls the test's `mint` (or
 * rejects with `reject`), and records its calls and the widget's `pickup:error` events. */
async function hostWithGetToken(page: Page, pickup: Pickup, host: HostPage, token: string, get: { mint?: () => string; reject?: string }) {
  if (get.mint) await page.exposeFunction("mint", get.mint);
  host.serve(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Host app</title></head><body>
<div id="widget"></div>
<script type="module">
  import { mount } from "${pickup.url}/pickup.js";
  window.calls = [];
  window.errors = [];
  const el = document.getElementById("widget");
  el.addEventListener("${DOM_EVENT.error}", (e) => window.errors.push(e.detail));
  mount(el, {
    workspace: "acme", server: "${pickup.url}", token: "${token}", refresh: 600,
    getToken: async () => {
      window.calls.push(Date.now());
      ${get.reject ? `throw new Error(${JSON.stringify(get.reject)});` : "return window.mint();"}
    },
  });
</script></body></html>`);
  let loads = 0;
  page.on("load", () => loads++);
  await page.goto(host.origin);
  return { loads: () => loads };
}

const calls = (page: Page): Promise<number[]> => page.evaluate(() => (window as any).calls);
const errors = (page: Page): Promise<any[]> => page.evaluate(() => (window as any).errors);

test("a token of a few seconds, handed over half-way through its life, is renewed through getToken before it expires; the cards stay live", async ({ page }) => {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    const bot = pickup.token("bot", ["acme"], { write: true });
    const first = pickup.token("alice", ["acme"], { ttl: "5s" });
    // The wasm arrives 2.5 s into the token's 5 s, as on a slow network or a busy machine: the
    // widget gets a token half spent, to renew 4 s after it was issued (renewing at 80% of its
    // lifetime counted from the widget's start renewed it 1.5 s after it expired).
    await page.route("**/*.wasm", async (route) => {
      const late = issued(first) + 2500 - Date.now();
      if (late > 0) await new Promise((r) => setTimeout(r, late));
      await route.continue().catch(() => {});
    });
    const page1 = await hostWithGetToken(page, pickup, host, first, { mint: () => pickup.token("alice", ["acme"], { ttl: "5s" }) });
    await expect(page.locator(".pickup-empty")).toBeVisible();
    await page.unrouteAll({ behavior: "wait" });

    // Asked ahead of expiry (at 80% of its lifetime), not after a refusal.
    await expect.poll(async () => (await calls(page)).length).toBeGreaterThanOrEqual(1);
    expect((await calls(page))[0]).toBeLessThan(expiry(first));
    // Past the first token's expiry, and the second's renewal: items still arrive.
    await expect.poll(async () => (await calls(page)).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
    expect(Date.now()).toBeGreaterThan(expiry(first));
    await pickup.register(bot, "acme", { key: "after", title: "Made after the first token expired", status: "running" });
    await expect(titles(page)).toHaveText(["Made after the first token expired"]);

    await expect(page.locator(".pickup-unauthenticated")).toHaveCount(0);
    expect(await errors(page)).toEqual([]);
    expect(page1.loads()).toBe(1);
  } finally {
    await pickup.stop();
    await host.stop();
  }
});

test("a refused token is renewed once and the call made again", async ({ page }) => {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    const bot = pickup.token("bot", ["acme"], { write: true });
    await pickup.register(bot, "acme", { key: "seen", title: "Seen with the renewed token", status: "running" });
    // No stream: the fetch alone must renew and try again.
    await page.route(`**${livePath("acme")}?*`, (route) => route.abort());
    await hostWithGetToken(page, pickup, host, "not-a-token", { mint: () => pickup.token("alice", ["acme"], { ttl: "1h" }) });
    await expect(titles(page)).toHaveText(["Seen with the renewed token"]);
    expect((await calls(page)).length).toBe(1);
    expect(await errors(page)).toEqual([]);
  } finally {
    await pickup.stop();
    await host.stop();
  }
});

test("a call refused after the stream renewed its token tries the new token, without a second renewal", async ({ page }) => {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    const bot = pickup.token("bot", ["acme"], { write: true });
    await pickup.register(bot, "acme", { key: "seen", title: "Seen once renewed", status: "running" });
    // The first call is held until the stream, refused the same token, has renewed it and
    // asks with the new one: the call's 401 then comes for a token no longer the widget's.
    let renewed: () => void;
    const renewal = new Promise<void>((r) => (renewed = r));
    const asksRenewed = (r: Request) => r.url().includes(`${recentPath("acme")}?cap=1`) && r.headers()["authorization"] !== "Bearer not-a-token";
    page.on("request", (r) => asksRenewed(r) && renewed());
    await page.route(`**${SERVER_FN.recent}`, async (route) => {
      await renewal;
      await route.continue();
    });
    await hostWithGetToken(page, pickup, host, "not-a-token", { mint: () => pickup.token("alice", ["acme"], { ttl: "1h" }) });
    await expect(titles(page)).toHaveText(["Seen once renewed"]);
    expect((await calls(page)).length).toBe(1);
    expect(await errors(page)).toEqual([]);
  } finally {
    await pickup.stop();
    await host.stop();
  }
});

test("a getToken that gives the refused token again does not make the stream retry at once", async ({ page }) => {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    // The stream's tries never reach the server with a token it refused: public/share.js asks
    // about each token once (a page of one card) and remembers the refusal.
    const checks: string[] = [];
    const lives: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes(`${recentPath("acme")}?cap=1`)) checks.push(r.url());
      if (r.url().includes(`${livePath("acme")}?`)) lives.push(r.url());
    });
    await hostWithGetToken(page, pickup, host, "not-a-token", { mint: () => "not-a-token" });
    // Each refused try of the stream asks getToken, which gives the same token: the tries come
    // after the stream's back-off (2 s, then 4 s), not a round trip apart.
    await expect.poll(async () => ((await calls(page)) ?? []).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(3);
    const at = await calls(page);
    const gaps = at.slice(1).map((t, i) => t - at[i]);
    expect(gaps[gaps.length - 1], `getToken called at ${at}`).toBeGreaterThan(1_000);
    expect(checks).toHaveLength(1);
    expect(lives).toEqual([]);
  } finally {
    await pickup.stop();
    await host.stop();
  }
});

test("when getToken fails the widget shows the sign-in message and fires pickup:error", async ({ page }) => {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    await hostWithGetToken(page, pickup, host, "not-a-token", { reject: "the identity provider is down" });
    await expect(page.locator(".pickup-unauthenticated")).toBeVisible();
    await expect.poll(() => errors(page)).toContainEqual({
      code: "unauthenticated",
      message: "getToken failed: the identity provider is down",
    });
  } finally {
    await pickup.stop();
    await host.stop();
  }
});

test("without getToken, a new data-pickup-token is used at once", async ({ page }) => {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    await pickup.register(pickup.token("bot", ["acme"], { write: true }), "acme", { key: "k", title: "Seen with the new token", status: "running" });
    host.serve(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Host app</title></head><body>
<div id="widget" data-pickup-workspace="acme" data-pickup-server="${pickup.url}" data-pickup-token="not-a-token" data-pickup-refresh="600"></div>
<script type="module" src="${pickup.url}/pickup.js"></script></body></html>`);
    await page.goto(host.origin);
    await expect(page.locator(".pickup-unauthenticated")).toBeVisible();

    // What a host does when its own session renews the token.
    const token = pickup.token("alice", ["acme"]);
    await page.evaluate((t) => document.getElementById("widget")!.setAttribute("data-pickup-token", t), token);
    await expect(titles(page)).toHaveText(["Seen with the new token"]);
    await expect(page.locator("section.pickup")).toHaveAttribute("data-live", "live");
  } finally {
    await pickup.stop();
    await host.stop();
  }
});

test("a getToken answer that comes after the host set a newer data-pickup-token does not replace it", async ({ page }) => {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    // getToken answers only when the test says so.
    host.serve(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Host app</title></head><body>
<div id="widget"></div>
<script type="module">
  import { mount } from "${pickup.url}/pickup.js";
  window.asked = new Promise((asked) => {
    mount(document.getElementById("widget"), {
      workspace: "acme", server: "${pickup.url}", token: "not-a-token", refresh: 600,
      getToken: () => { asked(); return new Promise((answer) => (window.answer = answer)); },
    });
  });
</script></body></html>`);
    await page.goto(host.origin);
    // The refused first call asked getToken; meanwhile the host's session gives a new token,
    // which ends the wait (getToken may never answer).
    // The host's module sets `asked` once pickup.js has loaded, which may be after `load`.
    await page.waitForFunction(() => (window as any).asked);
    await page.evaluate(() => (window as any).asked);
    const fresh = pickup.token("alice", ["acme"]);
    await page.evaluate((t) => document.getElementById("widget")!.setAttribute("data-pickup-token", t), fresh);
    await expect(page.locator(".pickup-empty")).toBeVisible();

    // getToken's late answer changes nothing: the next call carries the host's token.
    await page.evaluate(() => (window as any).answer("an-older-token"));
    const next = page.waitForRequest((r) => r.url().includes(`${pickup.url}${SERVER_FN.recent}`));
    await page.getByRole("button", { name: "Refresh" }).click();
    expect((await next).headers()["authorization"]).toBe(`Bearer ${fresh}`);
    await expect(page.locator(".pickup-unauthenticated")).toHaveCount(0);
  } finally {
    await pickup.stop();
    await host.stop();
  }
});

test("with getToken and no token, the first calls, the stream included, wait for getToken", async ({ page }) => {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    const bot = pickup.token("bot", ["acme"], { write: true });
    await pickup.register(bot, "acme", { key: "first", title: "Seen with getToken's token", status: "running" });
    // Every call to Pickup and the bearer it carried (read before the test looks at them).
    // The listener is taken off before they are awaited, so no header read it starts outlives
    // the test (a request still in flight at the end made `allHeaders` fail with "Test ended").
    const sent: Promise<{ url: string; bearer: string }>[] = [];
    const onRequest = (r: Request) => {
      if (r.url().startsWith(pickup.url) && /\/(api|live)/.test(r.url()))
        sent.push(r.allHeaders().then((h) => ({ url: r.url(), bearer: (h["authorization"] ?? "").replace(/^Bearer\s*/, "") })));
    };
    page.on("request", onRequest);
    const consoleErrors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") consoleErrors.push(m.text());
    });
    await hostWithGetToken(page, pickup, host, "", { mint: () => pickup.token("alice", ["acme"], { ttl: "1h" }) });
    await expect(titles(page)).toHaveText(["Seen with getToken's token"]);
    await expect(page.locator("section.pickup")).toHaveAttribute("data-live", "live");
    page.off("request", onRequest);
    const calls_ = await Promise.all(sent);
    expect(calls_.filter((c) => c.url.includes(`${livePath("acme")}?`)).length).toBeGreaterThanOrEqual(1);
    expect(calls_.filter((c) => c.bearer === "")).toEqual([]);
    expect(consoleErrors).toEqual([]);
    expect(await errors(page)).toEqual([]);
    // The fetch and the stream waited for the same call.
    expect((await calls(page)).length).toBe(1);
  } finally {
    await pickup.stop();
    await host.stop();
  }
});
