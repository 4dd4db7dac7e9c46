// pickup.d.ts and custom-elements.json, as a running server serves them beside pickup.js: tsc
// checks two small TypeScript hosts against the types (end2end/types/: plain DOM, and React
// 19's JSX; both also hold mistakes the types must catch), and the manifest names what the element has.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { test, expect, DOM_EVENT } from "./pickup";

test("the served pickup.d.ts types a TypeScript host (tsc), and custom-elements.json describes the element", async ({ pickup, page }) => {
  const types = await fetch(`${pickup.url}/pickup.d.ts`);
  expect(types.status).toBe(200);
  expect(types.headers.get("content-type")).toBe("application/typescript; charset=utf-8");
  // Beside the hosts (end2end/types/, where tsc finds React's types), under the name a host's
  // `import "./pickup.js"` resolves to.
  const types_ = join(__dirname, "..", "types");
  writeFileSync(join(types_, "pickup.d.ts"), await types.text());
  let out = "";
  try {
    out = execFileSync(join(__dirname, "..", "node_modules", ".bin", "tsc"), ["-p", types_], { encoding: "utf8" });
  } catch (e: any) {
    out = `${e.stdout}${e.stderr}`;
  }
  expect(out).toBe("");

  const res = await fetch(`${pickup.url}/custom-elements.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("application/json");
  const manifest = await res.json();
  const element = manifest.modules.flatMap((m: any) => m.declarations).find((d: any) => d.tagName === "pickup-recent");
  expect(element.attributes.map((a: any) => a.name)).toEqual(["workspace", "server", "cap", "refresh", "locale", "filter", "notify", "exclude"]);
  expect(element.members.map((m: any) => m.name)).toEqual(expect.arrayContaining(["token", "getToken", "labels"]));
  expect(element.events.map((e: any) => e.name)).toEqual([DOM_EVENT.open, DOM_EVENT.dismiss, DOM_EVENT.error, DOM_EVENT.finished]);
  expect(element.cssParts.map((p: any) => p.name)).toEqual(["card", "title", "badge", "progress", "header", "toggle", "dismiss", "pin", "empty", "error", "since", "mark-seen", "bell"]);
  // The element observes the manifest's attributes (both are written from app/src/contract/),
  // as the served element defines them in a browser, and its token.
  await page.goto(`${pickup.url}/embed.html`);
  const observed = await page.evaluate(async () => {
    await customElements.whenDefined("pickup-recent");
    return (customElements.get("pickup-recent") as any).observedAttributes;
  });
  expect(observed).toEqual([...element.attributes.map((a: any) => a.name), "token"]);
});
