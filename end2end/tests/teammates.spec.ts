// Working beside teammates: their new items reach the widget without a reload.
import { test, expect } from "./pickup";

test("a teammate's new item appears without reloading, within one refresh period", async ({ browser, pickup }) => {
  const alice = pickup.token("alice", ["acme"], { name: "Alice", write: true });
  const bob = pickup.token("bob", ["acme"], { name: "Bob" });
  const [a, b] = [await browser.newContext(), await browser.newContext()];
  const [pa, pb] = [await a.newPage(), await b.newPage()];
  await pa.goto(pickup.home("acme", alice) + "&refresh=2");
  await pb.goto(pickup.home("acme", bob) + "&refresh=2");
  await expect(pb.locator(".pickup-empty")).toBeVisible();

  await pickup.register(alice, "acme", { key: "fresh", title: "Alice's fresh run", status: "running" });
  // One refresh period (2 s) plus a second for the call and the render; no reload.
  await expect(pb.locator(".pickup-card-title")).toHaveText(["Alice's fresh run"], { timeout: 3_000 });
  await expect(pb.locator(".pickup-owner")).toHaveText(["Alice"]);
  await expect(pb.getByRole("status").filter({ hasText: "New: Alice's fresh run" })).toBeAttached();
  await a.close();
  await b.close();
});
