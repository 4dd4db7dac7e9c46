// docs/TESTING.md prints the recipe's example; recipe.spec.ts runs it. They must not drift apart.
import { test, expect } from "@playwright/test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

test("docs/TESTING.md prints recipe.spec.ts exactly", () => {
  const doc = readFileSync(join(__dirname, "..", "..", "docs", "TESTING.md"), "utf8");
  const spec = readFileSync(join(__dirname, "recipe.spec.ts"), "utf8");
  const printed = doc.match(/<!-- end2end\/tests\/recipe\.spec\.ts -->\n```ts\n([\s\S]*?)```\n/);
  expect(printed, "TESTING.md has the recipe under its marker").not.toBeNull();
  expect(printed![1]).toBe(spec);
});
