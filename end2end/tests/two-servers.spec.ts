// Several widgets on one page, each talking to its own Pickup server with its own token.
import { test, expect, startPickup } from "./pickup";
import { HostPage } from "./host";

test("two widgets on two servers: each shows its own server's items", async ({ page }) => {
  const host = await HostPage.start();
  const one = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  const two = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    await one.register(one.token("bot", ["acme"], { write: true }), "acme", { key: "a", title: "On server one", status: "running" });
    await two.register(two.token("bot", ["acme"], { write: true }), "acme", { key: "b", title: "On server two", status: "running" });
    // Each server's tokens are signed with its own secret: each widget must send its own to its own.
    host.serve(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Host app</title></head><body>
<div id="one" data-pickup-workspace="acme" data-pickup-server="${one.url}" data-pickup-token="${one.token("alice", ["acme"])}"></div>
<div id="two"></div>
<script type="module">
  import { mount } from "${one.url}/pickup.js";
  mount(document.getElementById("two"), { workspace: "acme", server: "${two.url}", token: "${two.token("alice", ["acme"])}" });
</script></body></html>`);
    const calls: string[] = [];
    page.on("request", (r) => r.url().includes("/api/") && calls.push(new URL(r.url()).origin));

    await page.goto(host.origin);
    await expect(page.locator("#one .pickup-card-title")).toHaveText(["On server one"]);
    await expect(page.locator("#two .pickup-card-title")).toHaveText(["On server two"]);
    await expect(page.locator("#one section.pickup")).toHaveAttribute("data-live", "live");
    await expect(page.locator("#two section.pickup")).toHaveAttribute("data-live", "live");

    // Live updates reach the right widget.
    await two.register(two.token("bot", ["acme"], { write: true }), "acme", { key: "c", title: "Later on server two", status: "running" });
    await expect(page.locator("#two .pickup-card-title")).toHaveText(["Later on server two", "On server two"]);
    await expect(page.locator("#one .pickup-card-title")).toHaveText(["On server one"]);
    expect(new Set(calls)).toEqual(new Set([one.url, two.url]));
  } finally {
    await one.stop();
    await two.stop();
    await host.stop();
  }
});
