// Screenshots of the widget (light, dark, narrow) into end2end/screenshots/.
import { test, expect } from "./pickup";
import { mkdirSync } from "node:fs";

test("screenshots: light, dark and narrow", async ({ page, pickup }) => {
  const people = { ada: "Ada", linus: "Linus", grace: "Grace", you: "You" };
  const t = (sub: string) => pickup.token(sub, ["acme"], { name: people[sub], write: true });
  const items: [string, string, string, number | null, string][] = [
    ["reindex", "Re-index search", "failed", null, "linus"],
    ["churn", "Churn analysis — EU", "succeeded", 1, "grace"],
    ["train", "Nightly model training", "running", 0.62, "ada"],
    ["upload", "Upload: Q3 customer interviews", "queued", null, "you"],
    ["report", "Weekly report draft", "running", 0.3, "you"],
  ];
  for (const [key, title, status, progress, who] of items) {
    await pickup.register(t(who), "acme", { key, title, status, progress, url: `/runs/${key}` });
  }
  mkdirSync("screenshots", { recursive: true });
  const shots: [string, "light" | "dark", number][] = [["light", "light", 760], ["dark", "dark", 760], ["narrow", "light", 300]];
  for (const [name, colorScheme, width] of shots) {
    await page.setViewportSize({ width, height: 720 });
    await page.emulateMedia({ colorScheme });
    await page.goto(pickup.home("acme", t("you")));
    await expect(page.locator(".pickup-card")).toHaveCount(5);
    await page.screenshot({ path: `screenshots/${name}.png`, fullPage: true });
  }
});
