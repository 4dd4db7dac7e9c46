// What a host page gets besides the cards: events on its element, its own words and locale,
// and an unmount that stops everything.
import { test, expect, startPickup, titles, holdWasm, livePath, DOM_EVENT, SERVER_FN } from "./pickup";
import type { Route } from "@playwright/test";
import { HostPage } from "./host";

test("pickup:open and pickup:dismiss reach the host, which may take over the link", async ({ page }) => {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    const item = await pickup.register(pickup.token("bot", ["acme"], { write: true }), "acme", { key: "run", title: "Nightly training", url: "/runs/42", status: "running" });
    host.serve(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Host app</title></head><body>
<main id="app"><div id="widget" data-pickup-workspace="acme" data-pickup-server="${pickup.url}" data-pickup-token="${pickup.token("alice", ["acme"])}"></div></main>
<script>
  window.events = [];
  // Listened for on an ancestor: the events bubble. The host routes the link itself.
  for (const name of ["${DOM_EVENT.open}", "${DOM_EVENT.dismiss}"]) {
    document.getElementById("app").addEventListener(name, (e) => {
      window.events.push({ type: e.type, detail: e.detail });
      e.preventDefault();
    });
  }
</script>
<script type="module" src="${pickup.url}/pickup.js"></script></body></html>`);
    await page.goto(host.origin);
    await page.getByRole("link", { name: "Nightly training" }).click();
    await page.getByRole("button", { name: "Dismiss Nightly training" }).click();
    await expect(titles(page)).toHaveCount(0);
    expect(page.url()).toBe(`${host.origin}/`);
    expect(await page.evaluate(() => (window as any).events)).toEqual([
      { type: DOM_EVENT.open, detail: { id: item.id, key: "run", url: "/runs/42" } },
      { type: DOM_EVENT.dismiss, detail: { id: item.id } },
    ]);
  } finally {
    await pickup.stop();
    await host.stop();
  }
});

test("labels and locale from the host: data attributes and mount options", async ({ page }) => {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    await pickup.register(pickup.token("bot", ["acme"], { write: true }), "acme", { key: "run", title: "Nachtlauf", status: "running" });
    const viewer = pickup.token("alice", ["acme"]);
    const labels = { title: "Weitermachen", mine: "Meine", everyone: "Alle", dismiss: "{title} ausblenden", running: "läuft", list: "Neueste" };
    host.serve(`<!DOCTYPE html><html lang="de"><head><meta charset="utf-8"><title>Host app</title></head><body>
<div id="by-attributes" data-pickup-workspace="acme" data-pickup-server="${pickup.url}" data-pickup-token="${viewer}"
     data-pickup-locale="de" data-pickup-labels='${JSON.stringify(labels)}'></div>
<div id="by-mount"></div>
<div id="english"></div>
<script type="module">
  import { mount } from "${pickup.url}/pickup.js";
  mount(document.getElementById("by-mount"), { workspace: "acme", server: "${pickup.url}", token: "${viewer}", locale: "fr", labels: { mine: "Les miens", nope: "x" } });
  mount(document.getElementById("english"), { workspace: "acme", server: "${pickup.url}", token: "${viewer}", locale: "en" });
</script></body></html>`);
    const warnings: string[] = [];
    page.on("console", (m) => m.type() === "warning" && warnings.push(m.text()));
    await page.goto(host.origin);

    const de = page.locator("#by-attributes");
    await expect(de.getByRole("list", { name: "Neueste" }).getByRole("listitem", { name: "Nachtlauf" })).toBeVisible();
    await expect(de.getByRole("heading")).toHaveText("Weitermachen");
    await expect(de.getByRole("button", { name: "Meine" })).toBeVisible();
    await expect(de.getByRole("button", { name: "Nachtlauf ausblenden" })).toBeVisible();
    await expect(de.locator(".pickup-badge")).toHaveText("läuft");
    await expect(de.locator("time")).toHaveText("jetzt");

    const fr = page.locator("#by-mount");
    await expect(fr.getByRole("button", { name: "Les miens" })).toBeVisible();
    await expect(fr.getByRole("button", { name: "Everyone" })).toBeVisible();
    await expect(fr.locator("time")).toHaveText("maintenant");
    expect(warnings).toContain('pickup: there is no label "nope": it is ignored');

    const en = page.locator("#english");
    await expect(en.getByRole("heading")).toHaveText("Pick up where you left off");
    await expect(en.locator("time")).toHaveText("now");
  } finally {
    await pickup.stop();
    await host.stop();
  }
});

test("unmount removes the widget and stops its stream, timers and token renewal", async ({ page }) => {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin, PICKUP_METRICS_ADDR: "127.0.0.1:0" });
  try {
    await page.exposeFunction("mint", () => pickup.token("alice", ["gamma"], { ttl: "2s" }));
    host.serve(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Host app</title></head><body>
<div id="streaming"></div><div id="renewing"></div><div id="staying"></div>
<script type="module">
  import { mount } from "${pickup.url}/pickup.js";
  window.renewals = 0;
  const getToken = () => { window.renewals++; return window.mint(); };
  window.leaving = [
    mount(document.getElementById("streaming"), { workspace: "acme", server: "${pickup.url}", token: "${pickup.token("alice", ["acme"])}" }),
    mount(document.getElementById("renewing"), { workspace: "gamma", server: "${pickup.url}", getToken, refresh: 1 }),
  ];
  mount(document.getElementById("staying"), { workspace: "beta", server: "${pickup.url}", token: "${pickup.token("alice", ["beta"])}", refresh: 1 });
</script></body></html>`);
    // Only the streaming widget streams; the others poll every second. The staying one is this
    // test's clock.
    await page.route((url) => [livePath("beta"), livePath("gamma")].includes(url.pathname), (route) => route.abort());
    // The renewing widget's look (a first visit's, which it keeps at its first page) is held until
    // it has left: the answer comes after its state is gone.
    const held: Route[] = [];
    await page.route((url) => url.pathname === SERVER_FN.look, (route) =>
      route.request().postData()?.includes('"ws":"gamma"') ? held.push(route) : route.continue());
    const requests = { left: 0, beta: 0 };
    page.on("request", (r) => {
      const body = r.postData() ?? "";
      if (/\/workspaces\/(acme|gamma)\//.test(r.url()) || /"ws":"(acme|gamma)"/.test(body)) requests.left++;
      if (body.includes('"ws":"beta"')) requests.beta++;
    });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(host.origin);
    await expect(page.locator("#streaming section.pickup")).toHaveAttribute("data-live", "live");
    await expect(page.locator("#renewing .pickup-empty")).toBeVisible();
    await expect(page.locator("#staying .pickup-empty")).toBeVisible();
    await expect.poll(() => pickup.streams()).toBe(1);
    await expect.poll(() => held.length).toBe(1);

    const renewals = await page.evaluate(() => {
      for (const widget of (window as any).leaving) widget.unmount();
      return (window as any).renewals;
    });
    await expect(page.locator("#streaming")).toBeEmpty();
    await expect(page.locator("#renewing")).toBeEmpty();
    // The stream's token lives an hour: only the widget can have closed it.
    await expect.poll(() => pickup.streams()).toBe(0);
    await held[0].continue();
    const [left, beta] = [requests.left, requests.beta];
    // Three polls of the staying widget: past the renewing widget's renewal time (1.6 s) and
    // its polling period. Nothing of the widgets that left meanwhile.
    await expect.poll(() => requests.beta, { timeout: 10_000 }).toBeGreaterThanOrEqual(beta + 3);
    expect(requests.left).toBe(left);
    expect(await page.evaluate(() => (window as any).renewals)).toBe(renewals);
    // A second unmount does nothing.
    await page.evaluate(() => (window as any).leaving[0].unmount());
    expect(errors).toEqual([]);
  } finally {
    await pickup.stop();
    await host.stop();
  }
});

test("importing pickup.js never holds the host: its module runs, and mount() answers, before the wasm is in", async ({ page }) => {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    await pickup.register(pickup.token("bot", ["acme"], { write: true }), "acme", { key: "run", title: "Behind the host", status: "running" });
    host.serve(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Host app</title></head><body>
<div id="widget"></div>
<script type="module">
  import { mount } from "${pickup.url}/pickup.js";
  window.handle = mount(document.getElementById("widget"), { workspace: "acme", server: "${pickup.url}", token: "${pickup.token("alice", ["acme"])}" });
  window.hostRan = typeof window.handle.unmount === "function" && typeof window.handle.refresh === "function";
</script></body></html>`);
    const wasm = await holdWasm(page);
    await page.goto(host.origin);
    await wasm.asked;
    // The wasm is on its way and held: the host's own module has run all the same, and the
    // first page is drawn (early.js), its buttons waiting for the widget.
    await expect.poll(() => page.evaluate(() => (window as any).hostRan)).toBe(true);
    await expect(page.locator("#widget [data-pickup-drawn] .pickup-card-title")).toHaveText(["Behind the host"]);
    await expect(page.locator("#widget").getByRole("button", { name: "Refresh" })).toBeDisabled();
    // A refresh asked for before the widget is there waits for it rather than failing.
    await page.evaluate(() => (window as any).handle.refresh());
    await wasm.release();
    await expect(page.locator("#widget").getByRole("button", { name: "Refresh" })).toBeEnabled();
    await expect(titles(page)).toHaveText(["Behind the host"]);
  } finally {
    await pickup.stop();
    await host.stop();
  }
});
