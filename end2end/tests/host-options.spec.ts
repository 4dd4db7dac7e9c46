// A host page that writes nonsense into the widget's options still gets a working widget, and a
// warning in the console that says what was wrong.
import { test, expect, startPickup } from "./pickup";
import { HostPage } from "./host";

test("nonsense cap and refresh fall back to the defaults with a warning, no panic", async ({ page }) => {
  const host = await HostPage.start();
  const pickup = await startPickup({ PICKUP_ALLOWED_ORIGINS: host.origin });
  try {
    const bot = pickup.token("bot", ["acme"], { write: true });
    for (let i = 0; i < 10; i++) {
      await pickup.register(bot, "acme", { key: `k${i}`, title: `Item ${i}`, status: "running" });
    }
    const viewer = pickup.token("alice", ["acme"]);
    host.serve(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Host app</title></head><body>
<div id="by-attributes" data-pickup-workspace="acme" data-pickup-server="${pickup.url}" data-pickup-token="${viewer}"
     data-pickup-cap="-5" data-pickup-refresh="1e308"></div>
<!-- Text the browser's Number() would read but Rust's parse does not, and text both read. -->
<div id="hex" data-pickup-workspace="acme" data-pickup-server="${pickup.url}" data-pickup-token="${viewer}"
     data-pickup-cap="0x4"></div>
<div id="decimal" data-pickup-workspace="acme" data-pickup-server="${pickup.url}" data-pickup-token="${viewer}"
     data-pickup-cap=" .3e1 "></div>
<div id="by-mount"></div>
<div id="fractions"></div>
<script type="module">
  import { mount } from "${pickup.url}/pickup.js";
  mount(document.getElementById("by-mount"),
        { workspace: "acme", token: "${viewer}", server: "${pickup.url}", cap: NaN, refresh: Infinity });
  // Numbers the warnings show as Rust would: the browser formats their digits in the widget.
  mount(document.getElementById("fractions"),
        { workspace: "acme", token: "${viewer}", server: "${pickup.url}", cap: 2.5, refresh: 1.5e20 });
</script></body></html>`);
    const warnings: string[] = [];
    const errors: string[] = [];
    page.on("console", (m) => m.type() === "warning" && warnings.push(m.text()));
    page.on("pageerror", (e) => errors.push(String(e)));

    await page.goto(host.origin);
    // The default cap (8), not 1 and not a crash.
    await expect(page.locator("#by-attributes .pickup-card")).toHaveCount(8);
    await expect(page.locator("#by-mount .pickup-card")).toHaveCount(8);
    await expect(page.locator("#hex .pickup-card")).toHaveCount(8);
    await expect(page.locator("#decimal .pickup-card")).toHaveCount(3);
    await expect(page.locator("#fractions .pickup-card")).toHaveCount(3);
    expect(errors).toEqual([]);
    expect(warnings.filter((w) => w.includes(".3e1"))).toEqual([]);
    for (const said of [
      'cap "-5"',
      'refresh "1e308"',
      'cap "0x4" is not a number from 1 to 50: using the default, 8',
      "cap NaN",
      "refresh inf",
      "cap 2.5 is outside 1..=50: using 3",
      "refresh 1.5e20 is not a number from 1 to 86400: using the default, 15",
    ]) {
      expect(warnings.some((w) => w.includes(said)), `${said} in ${JSON.stringify(warnings)}`).toBe(true);
    }
  } finally {
    await pickup.stop();
    await host.stop();
  }
});
