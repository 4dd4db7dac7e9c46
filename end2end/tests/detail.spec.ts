// An item's detail, the one line under its title: in the server's drawing and in the widget,
// read with the card as its description, and changed live with the item.
import { test, expect, holdWasm } from "./pickup";

test("an item's detail is under its title, in the drawing and the widget, and changes live", async ({ page, pickup }) => {
  const bot = pickup.token("bot", ["acme"], { write: true });
  const said = "Uploading 3 of 12 files";
  const item = await pickup.register(bot, "acme", { key: "upload", title: "Upload", status: "running", detail: said });
  const wasm = await holdWasm(page);
  await page.goto(pickup.home("acme", pickup.token("alice", ["acme"])));
  const drawn = page.locator("[data-pickup-drawn] .pickup-card");
  await expect(drawn.locator(".pickup-card-detail")).toHaveText(said);
  await expect(drawn).toHaveAccessibleDescription(said);

  await wasm.release();
  const widget = page.locator("section.pickup:not([data-pickup-drawn])");
  const card = widget.locator(".pickup-card[data-id]");
  await expect(card).toHaveAccessibleName("Upload");
  await expect(card).toHaveAccessibleDescription(said);
  const title = await card.locator(".pickup-card-title").boundingBox();
  const detail = await card.locator(".pickup-card-detail").boundingBox();
  expect(detail!.y).toBeGreaterThanOrEqual(title!.y + title!.height);

  await expect(widget).toHaveAttribute("data-live", "live");
  await pickup.update(bot, "acme", item.id, { title: "Upload", status: "running", detail: "Uploading 4 of 12 files" });
  await expect(card.locator(".pickup-card-detail")).toHaveText("Uploading 4 of 12 files");
  await pickup.update(bot, "acme", item.id, { title: "Upload", status: "succeeded" });
  await expect(card.locator(".pickup-badge")).toHaveText("succeeded");
  await expect(card.locator(".pickup-card-detail")).toHaveText("");
  await expect(card.locator(".pickup-card-detail")).toBeHidden();
  await expect(card).toHaveAccessibleDescription("");
});
