// The walking skeleton, end to end: empty store → producer API → server function → widget.
import { test, expect, startPickup, holdWasm, titles, SERVER_FN, livePath, drawingPath } from "./pickup";
import { HostPage } from "./host";

test("the home page shows the registered items, newest first", async ({ page, pickup }) => {
  const producer = pickup.token("ci-bot", ["acme"], { name: "CI bot", write: true });
  const viewer = pickup.token("alice", ["acme"], { name: "Alice" });

  // Empty store: the widget says so.
  await page.goto(pickup.home("acme", viewer));
  await expect(page.locator(".pickup-empty")).toBeVisible();

  // Registered one after the other, so each is strictly newer than the one before.
  const titles = ["Nightly training", "Upload interviews", "Churn report"];
  const records = [];
  for (const title of titles) {
    records.push(await pickup.register(producer, "acme", { key: title.replace(/ /g, "-"), title, status: "running" }));
  }
  expect(new Set(records.map((r) => r.id)).size).toBe(3);

  await page.getByRole("button", { name: "Refresh" }).click();
  const cards = page.locator(".pickup-card");
  await expect(cards).toHaveCount(3);
  await expect(page.locator(".pickup-card-title")).toHaveText([...titles].reverse());
  await expect(cards.first().locator(".pickup-badge")).toHaveText("running");
  await expect(cards.first().locator(".pickup-owner")).toHaveText("CI bot");
  // The token left the address bar (it stays in sessionStorage for reloads).
  expect(page.url()).not.toContain("token=");
  await page.reload();
  await expect(cards).toHaveCount(3);
});

test("time from navigation to the first card", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { write: true });
  for (let i = 0; i < 8; i++) await pickup.register(bot, "acme", { key: `k${i}`, title: `Item ${i}`, status: "running" });
  const url = pickup.home("acme", pickup.token("alice", ["acme"]));
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    await page.goto("about:blank"); // a real navigation each time, not a fragment change
    await page.goto(url);
    await page.locator(".pickup-card[data-id]").first().waitFor(); // a card, not the skeleton
    times.push(await page.evaluate(() => performance.now()));
  }
  times.sort((a, b) => a - b);
  console.log(`first card on screen after navigation: median ${times[2].toFixed(0)} ms (5 loads: ${times.map((t) => t.toFixed(0)).join(", ")})`);
  expect(times.length).toBe(5);
});

test("the first page and the viewer's look are asked for once, in one request, before the wasm", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { write: true });
  await pickup.register(bot, "acme", { key: "early", title: "Early bird", status: "running" });
  // The drawing's answer is the widget's first page and its look: it asks for neither again.
  const asked: string[] = [];
  const order: string[] = [];
  page.on("request", (r) => {
    const path = new URL(r.url()).pathname;
    if ([SERVER_FN.recent, SERVER_FN.looked, drawingPath("acme")].includes(path)) asked.push(r.url().slice(pickup.url.length));
    if (path.endsWith(".wasm")) order.push("wasm asked");
  });
  page.on("requestfinished", (r) => new URL(r.url()).pathname === drawingPath("acme") && order.push("drawing in"));
  const looked = page.waitForResponse((r) => r.url().endsWith(SERVER_FN.look));
  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])) + "&cap=3");
  await expect(titles(page)).toHaveText(["Early bird"]);
  // A first visit: the widget keeps its look at the first page (the one call it makes).
  expect((await looked).ok()).toBe(true);
  expect(asked).toEqual([`${drawingPath("acme")}?filter=all&cap=3`]);
  expect(order).toEqual(["drawing in", "wasm asked"]);
});

test("with sessionStorage blocked the home page still says how to sign in", async ({ page, pickup }) => {
  // As in a sandboxed frame, or with site data blocked: reading sessionStorage throws.
  await page.addInitScript(() =>
    Object.defineProperty(window, "sessionStorage", {
      get() {
        throw new DOMException("The operation is insecure.", "SecurityError");
      },
    }),
  );
  await page.goto(pickup.url + "/");
  await expect(page.locator(".pickup-state")).toContainText("Open the link that make run printed");
});

/** The markup under `selector`, as a tree of tags, sorted attributes and text (Leptos's
 *  placeholders and text-node splits left out), so two drawings of one page compare equal. The
 *  bell is left out too: what it says (on, off, blocked) is this browser's, which the server
 *  drawing ahead cannot know, so only the widget draws it. */
const shapeOf = (page: import("@playwright/test").Page, selector: string, leaveOut: string[] = []) =>
  page.evaluate(([selector, leaveOut]) => {
    type Shape = string | { tag: string; attrs: string[]; children: Shape[] };
    const shape = (node: Node): Shape | null => {
      if (node.nodeType === Node.TEXT_NODE) return node.textContent || null;
      if (!(node instanceof Element) || node.matches(".pickup-bell")) return null;
      const children: Shape[] = [];
      for (const child of node.childNodes) {
        const s = shape(child);
        if (s === null) continue;
        const last = children[children.length - 1];
        if (typeof s === "string" && typeof last === "string") children[children.length - 1] = last + s;
        else children.push(s);
      }
      const attrs = [...node.attributes].filter((a) => !leaveOut.includes(a.name)).map((a) => `${a.name}=${a.value}`).sort();
      return { tag: node.tagName.toLowerCase(), attrs, children };
    };
    // `host::shadow inner`: `inner` in `host`'s shadow root.
    const [host, inner] = selector.split("::shadow ");
    const el = document.querySelector(host)!;
    return shape(inner ? el.shadowRoot!.querySelector(inner)! : el);
  }, [selector, leaveOut] as const);

test("the home page draws its first page before the wasm has arrived, as the widget draws it", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { name: "Bot <b>", write: true });
  await pickup.register(bot, "acme", { key: "a", title: "Oldest", status: "succeeded" });
  await pickup.register(bot, "acme", { key: "b", title: "Costs $& more", status: "running", progress: 0.456, url: "https://example.com/b" });
  await pickup.register(bot, "acme", { key: "c", title: "Not a link", status: "queued" });
  // Whether the widget's skeleton was ever shown: the drawing must stay until the widget has
  // drawn the cards itself.
  await page.addInitScript(() =>
    new MutationObserver(() => {
      if (document.querySelector(".pickup-skeleton")?.checkVisibility()) (window as any).skeletonShown = true;
    }).observe(document, { childList: true, subtree: true }),
  );
  const wasm = await holdWasm(page);
  // cap=2 of 3 items: the page has more, so "Show older" is drawn too.
  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])) + "&cap=2");
  const home = "[data-pickup-home]";
  await expect(page.locator(".pickup-card-title")).toHaveText(["Not a link", "Costs $& more"]);
  // Nothing would answer a click yet.
  for (const b of await page.getByRole("button").all()) await expect(b).toBeDisabled();
  // The same markup as the widget's below, but for the disabled buttons, the drawing's mark (and
  // whether the widget's stream is live yet).
  const drawn = await shapeOf(page, home, ["disabled", "data-pickup-drawn", "data-live"]);

  await wasm.release();
  await expect(page.getByRole("button", { name: "Refresh" })).toBeEnabled();
  await expect(page.locator(".pickup-card-title")).toHaveText(["Not a link", "Costs $& more"]);
  const widget = await shapeOf(page, home, ["data-live"]);
  expect(drawn).toEqual(widget);
  expect(await page.evaluate(() => (window as any).skeletonShown)).toBeUndefined();
});

test("<pickup-recent> on a host page draws its first page before the wasm has arrived", async ({ page, pickup }) => {
  const host = await HostPage.start();
  const server = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    const bot = server.token("bot", ["acme"], { name: "Bot", write: true });
    const alice = server.token("alice", ["acme"], { name: "Alice", write: true });
    await server.register(bot, "acme", { key: "a", title: "The bot's", status: "running" });
    await server.register(alice, "acme", { key: "b", title: "Oldest of mine", status: "succeeded" });
    await server.register(alice, "acme", { key: "c", title: "Newest of mine", status: "running", progress: 0.5 });
    host.serve(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Host</title></head><body>
<pickup-recent workspace="acme" server="${server.url}" token="${alice}" cap="1" filter="mine"></pickup-recent>
<script type="module" src="${server.url}/pickup.js"></script></body></html>`);
    const requests: string[] = [];
    page.on("request", (r) => requests.push(new URL(r.url()).pathname));
    const wasm = await holdWasm(page);
    await page.goto(host.origin);
    const el = "pickup-recent::shadow div";
    await expect(page.locator("pickup-recent .pickup-card-title")).toHaveText(["Newest of mine"]);
    await expect(page.locator("pickup-recent").getByRole("button", { name: "Mine", exact: true })).toHaveAttribute("aria-pressed", "true");
    for (const b of await page.locator("pickup-recent").getByRole("button").all()) await expect(b).toBeDisabled();
    const drawn = await shapeOf(page, el, ["disabled", "data-pickup-drawn", "data-live"]);

    await wasm.release();
    await expect(page.locator("pickup-recent").getByRole("button", { name: "Refresh" })).toBeEnabled();
    await expect(page.locator("pickup-recent section.pickup")).toHaveAttribute("data-live", "live");
    expect(await shapeOf(page, el, ["data-live"])).toEqual(drawn);
    // One request for the page and its drawing, one for the live updates; no `recent` call.
    expect(requests.filter((p) => p === livePath("acme"))).toHaveLength(1);
    expect(requests.filter((p) => p === drawingPath("acme"))).toHaveLength(1);
    expect(requests.filter((p) => p === SERVER_FN.recent)).toHaveLength(0);
  } finally {
    await server.stop();
    await host.stop();
  }
});

// Every other way docs/EMBEDDING.md gives the token draws ahead too, and the wasm's download
// waits for that first page (on a slow link the two would share it).
for (const way of ["token property", "getToken", "mount()"] as const) {
  test(`a host page giving the token by ${way} draws its first page before the wasm, which is asked for after it`, async ({ page }) => {
    const host = await HostPage.start();
    const server = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
    try {
      const alice = server.token("alice", ["acme"], { name: "Alice", write: true });
      await server.register(alice, "acme", { key: "a", title: "Drawn ahead", status: "running" });
      const js = `${server.url}/pickup.js`;
      const element = `<pickup-recent id="w" workspace="acme" server="${server.url}"></pickup-recent>`;
      const body = {
        "token property": `${element}<script type="module">import "${js}"; document.getElementById("w").token = "${alice}";</script>`,
        getToken: `${element}<script type="module">import "${js}"; window.asked = 0; document.getElementById("w").getToken = async () => { window.asked++; return "${alice}"; };</script>`,
        "mount()": `<div id="w"></div><script type="module">import { mount } from "${js}"; mount(document.getElementById("w"), { workspace: "acme", server: "${server.url}", token: "${alice}" });</script>`,
      }[way];
      host.serve(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Host</title></head><body>${body}</body></html>`);
      const order: string[] = [];
      page.on("request", (r) => { if (r.url().endsWith(".wasm")) order.push("wasm asked"); });
      page.on("requestfinished", (r) => { if (new URL(r.url()).pathname === drawingPath("acme")) order.push("drawing in"); });
      const wasm = await holdWasm(page);
      await page.goto(host.origin);
      const widget = page.locator("#w");
      await expect(widget.locator(".pickup-card-title")).toHaveText(["Drawn ahead"]);
      await expect(widget.getByRole("button", { name: "Refresh" })).toBeDisabled();
      await expect.poll(() => order).toEqual(["drawing in", "wasm asked"]);
      await wasm.release();
      await expect(widget.getByRole("button", { name: "Refresh" })).toBeEnabled();
      await expect(widget.locator(".pickup-card-title")).toHaveText(["Drawn ahead"]);
      // getToken was asked once for the drawing and the widget's first calls between them.
      if (way === "getToken") expect(await page.evaluate(() => (window as any).asked)).toBe(1);
    } finally {
      await server.stop();
      await host.stop();
    }
  });
}

test("a home page that cannot keep its sign-in says so, and asks for no page to draw over it", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { write: true });
  await pickup.register(bot, "acme", { key: "a", title: "Hidden", status: "running" });
  // The link carries ws and token, but the page cannot keep them (sessionStorage is blocked):
  // home.js signs the element in only once they are kept, so neither it nor the widget asks.
  await page.addInitScript(() =>
    Object.defineProperty(window, "sessionStorage", {
      get() {
        throw new DOMException("The operation is insecure.", "SecurityError");
      },
    }),
  );
  const asked: string[] = [];
  page.on("request", (r) => new URL(r.url()).pathname.startsWith("/api/") && asked.push(r.url()));
  const failed = page.waitForEvent("console", (m) => m.type() === "error" && m.text().includes("make run"));
  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])));
  await expect(page.locator(".pickup-state")).toContainText("Open the link that make run printed");
  await failed; // the widget has read the element and given up: nothing asks later
  expect(asked).toEqual([]);
  await expect(page.locator(".pickup-card")).toHaveCount(0);
});

test("a drawing no widget can take over is removed", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { write: true });
  await pickup.register(bot, "acme", { key: "a", title: "Drawn", status: "running" });
  let drawn: () => void;
  const shown = new Promise<void>((r) => (drawn = r));
  await page.exposeFunction("drawn", () => drawn());
  await page.addInitScript(() =>
    new MutationObserver((_, o) => {
      if (document.querySelector("[data-pickup-drawn]")) {
        o.disconnect();
        (window as any).drawn();
      }
    }).observe(document, { childList: true, subtree: true }),
  );
  // The wasm fails to download once the cards are drawn (a dropped connection on a slow network).
  await page.route("**/*.wasm", async (route) => {
    await shown;
    await route.abort("connectionreset");
  });
  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])));
  await shown;
  // Not left with buttons that never work and times that never move.
  await expect(page.locator("[data-pickup-drawn]")).toHaveCount(0);
});

test("an answer that is not the server's drawing is not drawn", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { write: true });
  await pickup.register(bot, "acme", { key: "a", title: "Drawn by the server", status: "running" });
  // A proxy's page, say, even one that looks like a drawing: the drawing is the server's answer
  // (its JSON, with the page) or nothing.
  const html = '<section class="pickup" data-pickup-drawn><ul class="pickup-list"><li class="pickup-card">Not the server\'s</li></ul></section>';
  await page.route(`**${drawingPath("acme")}?*`, (route) => route.fulfill({ contentType: "text/html", body: html }));
  await page.route("**/*.wasm", () => {}); // never answered: only the page's script draws
  const answered = page.waitForResponse((r) => new URL(r.url()).pathname === drawingPath("acme"));
  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])));
  await answered;
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await expect(page.locator(".pickup-card")).toHaveCount(0);
});
