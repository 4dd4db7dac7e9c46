// <pickup-recent>: the widget as a custom element, on a host page of another origin: from
// attributes alone, from properties (getToken, labels, filter), its events, refresh(), and its
// lifetime in the page (removed: its stream closed on the server; moved: kept).
import { Page } from "@playwright/test";
import { test, expect, startPickup, SERVER_FN, livePath, DOM_EVENT } from "./pickup";
import { HostPage } from "./host";

const page_ = (body: string) =>
  `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Host app</title></head><body>${body}</body></html>`;


async function setUp() {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin, PICKUP_METRICS_ADDR: "127.0.0.1:0" });
  const bot = pickup.token("bot", ["acme"], { name: "CI bot", write: true });
  return { host, pickup, bot };
}

const cardTitles = (page: Page, within = "pickup-recent") => page.locator(`${within} .pickup-card-title`);

test("a server-rendered page with attributes only: cards in a shadow root, live, pickup:open on the element", async ({ page }) => {
  const { host, pickup, bot } = await setUp();
  try {
    await pickup.register(bot, "acme", { key: "one", title: "Nightly training", status: "running", url: "/runs/1" });
    host.serve(page_(`<h1>Host</h1>
<pickup-recent workspace="acme" server="${pickup.url}" token="${pickup.token("alice", ["acme"])}" cap="5" refresh="60"></pickup-recent>
<script>window.opened = []; document.addEventListener("${DOM_EVENT.open}", (e) => { e.preventDefault(); window.opened.push([e.target.tagName, e.detail]); });</script>
<script type="module" src="${pickup.url}/pickup.js"></script>`));
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(host.origin);
    await expect(cardTitles(page)).toHaveText(["Nightly training"]);
    // The drawing stands in front of the widget until the widget has drawn its own page.
    await expect(page.locator("pickup-recent [data-pickup-drawn]")).toHaveCount(0);
    // In the element's shadow root, not in the page's DOM.
    expect(await page.evaluate(() => document.querySelectorAll(".pickup-card").length)).toBe(0);
    expect(await page.evaluate(() => document.querySelector("pickup-recent")!.shadowRoot!.querySelectorAll(".pickup-card").length)).toBe(1);
    await expect(page.locator("pickup-recent section.pickup")).toHaveAttribute("data-live", "live");
    await pickup.register(bot, "acme", { key: "two", title: "Upload interviews", status: "queued" });
    await expect(cardTitles(page)).toHaveText(["Upload interviews", "Nightly training"]);
    await page.locator("pickup-recent a.pickup-card-title").click();
    await expect.poll(() => page.evaluate(() => (window as any).opened)).toEqual([["PICKUP-RECENT", { id: expect.any(String), key: "one", url: "/runs/1" }]]);
    expect(new URL(page.url()).pathname).toBe("/"); // the host routed it (preventDefault)
    expect(errors).toEqual([]);
  } finally {
    await pickup.stop();
    await host.stop();
  }
});

test("properties: getToken, labels and filter; refresh() asks again", async ({ page }) => {
  const { host, pickup, bot } = await setUp();
  try {
    await page.exposeFunction("mint", () => pickup.token("alice", ["acme"], { ttl: "1h" }));
    await pickup.register(bot, "acme", { key: "bots", title: "The bot's item", status: "running" });
    host.serve(page_(`<div id="here"></div>
<script type="module">
  import "${pickup.url}/pickup.js";
  const el = document.createElement("pickup-recent");
  el.workspace = "acme";
  el.server = "${pickup.url}";
  el.filter = "mine";
  el.labels = { title: "Zuletzt", mine: "Meine" };
  window.tokenCalls = 0;
  el.getToken = async () => { window.tokenCalls++; return window.mint(); };
  document.getElementById("here").append(el);
</script>`));
    let recent = 0;
    page.on("request", (r) => {
      if (r.url().endsWith(SERVER_FN.recent)) recent++;
    });
    await page.goto(host.origin);
    await expect(page.locator("pickup-recent .pickup-title")).toHaveText("Zuletzt");
    // Mine: alice owns nothing, so the bot's item is not shown.
    await expect(page.locator("pickup-recent .pickup-empty")).toBeVisible();
    await expect(page.locator("pickup-recent .pickup-toggle", { hasText: "Meine" })).toHaveAttribute("aria-pressed", "true");
    expect(await page.evaluate(() => (window as any).tokenCalls)).toBe(1);
    const before = recent;
    await page.evaluate(() => (document.querySelector("pickup-recent") as any).refresh());
    await expect.poll(() => recent).toBe(before + 1);
    // Everyone, by the viewer's toggle inside the shadow root.
    await page.locator("pickup-recent .pickup-toggle", { hasText: "Everyone" }).click();
    await expect(cardTitles(page)).toHaveText(["The bot's item"]);
  } finally {
    await pickup.stop();
    await host.stop();
  }
});

test("removed, the element frees its stream; moved, it keeps its widget; put back, it starts again", async ({ page }) => {
  const { host, pickup, bot } = await setUp();
  try {
    await pickup.register(bot, "acme", { key: "one", title: "Still here", status: "running" });
    host.serve(page_(`<div id="a"><pickup-recent workspace="acme" server="${pickup.url}"></pickup-recent></div><div id="b"></div>
<script type="module">
  import "${pickup.url}/pickup.js";
  document.querySelector("pickup-recent").token = "${pickup.token("alice", ["acme"])}";
</script>`));
    let lives = 0;
    page.on("request", (r) => {
      if (r.url().includes(`${livePath("acme")}?`)) lives++;
    });
    await page.goto(host.origin);
    // The widget's own section: the drawing stands in front of it until it has drawn its page.
    await expect(page.locator("#a pickup-recent section.pickup:not([data-pickup-drawn])")).toHaveAttribute("data-live", "live");
    await expect.poll(() => pickup.streams()).toBe(1);

    // Moved: the same widget, the same stream.
    await page.evaluate(() => {
      const el = document.querySelector("pickup-recent")!;
      document.getElementById("b")!.append(el);
      (window as any).kept = el.shadowRoot!.querySelector("section.pickup");
    });
    await expect(page.locator("#b pickup-recent section.pickup")).toHaveAttribute("data-live", "live");
    expect(await page.evaluate(() => (window as any).kept === document.querySelector("pickup-recent")!.shadowRoot!.querySelector("section.pickup"))).toBe(true);
    expect(lives).toBe(1);

    // Removed: the stream closes (its token lives an hour: only the widget can have closed it).
    await page.evaluate(() => {
      (window as any).removed = document.querySelector("pickup-recent");
      (window as any).removed.remove();
    });
    await expect.poll(() => pickup.streams()).toBe(0);
    expect(await page.evaluate(() => (window as any).removed.shadowRoot.querySelector(".pickup"))).toBeNull();

    // Put back: a new widget and stream.
    await page.evaluate(() => document.getElementById("a")!.append((window as any).removed));
    await expect(cardTitles(page)).toHaveText(["Still here"]);
    await expect.poll(() => pickup.streams()).toBe(1);
  } finally {
    await pickup.stop();
    await host.stop();
  }
});

test("pickup-element.js defines nothing by itself; a host defines it under its own name", async ({ page }) => {
  const { host, pickup, bot } = await setUp();
  try {
    await pickup.register(bot, "acme", { key: "one", title: "Under another name", status: "running" });
    host.serve(page_(`<my-pickup workspace="acme" server="${pickup.url}" token="${pickup.token("alice", ["acme"])}"></my-pickup>
<script type="module">
  const { PickupRecent } = await import("${pickup.url}/pickup-element.js");
  window.definedOnImport = !!customElements.get("pickup-recent");
  customElements.define("my-pickup", PickupRecent);
</script>`));
    await page.goto(host.origin);
    await expect(cardTitles(page, "my-pickup")).toHaveText(["Under another name"]);
    expect(await page.evaluate(() => (window as any).definedOnImport)).toBe(false);
    expect(await page.evaluate(() => !!customElements.get("pickup-recent"))).toBe(false);
  } finally {
    await pickup.stop();
    await host.stop();
  }
});
