// The recipe of docs/TESTING.md, exactly as it is printed there (testing-doc.spec.ts checks it):
// a host team's Playwright test of a page that embeds Pickup.
import { test, expect } from "@playwright/test";
import { spawn, execFileSync, ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";

const PICKUP = process.env.PICKUP_BIN ?? "pickup"; // the `pickup` binary
const SITE = process.env.PICKUP_SITE ?? "dist"; // the widget's files, as `pickup serve --site`
const SECRET = randomBytes(32).toString("hex"); // a test secret: its tokens work on this server only

let server: ChildProcess;
let url: string;

test.beforeAll(async () => {
  server = spawn(PICKUP, ["serve"], {
    env: {
      ...process.env,
      PICKUP_ADDR: "127.0.0.1:0", // any free port
      PICKUP_STORE: "memory://", // nothing on disk; gone with the process
      PICKUP_SITE: SITE,
      PICKUP_SECRET: SECRET,
      PICKUP_LOG: "warn",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  // `pickup serve` prints "listening on http://…" once it accepts connections: no sleeps.
  url = await new Promise((resolve, reject) => {
    let out = "";
    server.stdout!.on("data", (chunk) => {
      out += chunk;
      const m = out.match(/listening on (http:\/\/[\d.:]+)/);
      if (m) resolve(m[1]);
    });
    server.once("exit", (code) => reject(new Error(`pickup serve exited with ${code}: ${out}`)));
  });
});

test.afterAll(() => {
  server.kill();
});

/** A token for `sub` in `ws`, as your backend mints them (`--write` for producers). */
function token(sub: string, ws: string, ...flags: string[]): string {
  const args = ["token", "--sub", sub, "--name", sub, "--ws", ws, ...flags];
  return execFileSync(PICKUP, args, { env: { ...process.env, PICKUP_SECRET: SECRET } }).toString().trim();
}

/** Register an item through the producer API, as your jobs do. */
async function seed(ws: string, item: { key: string; title: string; status: string; url?: string }) {
  const res = await fetch(`${url}/api/v1/workspaces/${ws}/items`, {
    method: "POST",
    headers: { authorization: `Bearer ${token("ci-bot", ws, "--write")}`, "content-type": "application/json" },
    body: JSON.stringify(item),
  });
  expect(res.status).toBe(201);
  return res.json();
}

test("the sidebar shows the workspace's items, and a new one as it starts", async ({ page }) => {
  await seed("acme", { key: "nightly", title: "Nightly training", status: "running" });
  // Your page, embedding the widget with a token for its user. Here, the example host page
  // that `pickup serve` ships: embed.html#ws=…&token=…
  await page.goto(`${url}/embed.html#ws=acme&token=${token("alice", "acme")}`);

  // The widget is a region, its cards list items named by their titles (docs/TESTING.md).
  const widget = page.getByRole("region", { name: "Pick up where you left off" });
  const cards = widget.getByRole("list", { name: "Recent items" });
  await expect(cards.getByRole("listitem", { name: "Nightly training" })).toBeVisible();

  // A new item reaches the open page by itself (live, within a second or two).
  await seed("acme", { key: "upload", title: "Upload interviews", status: "queued" });
  await expect(cards.getByRole("listitem", { name: "Upload interviews" })).toBeVisible();
  await expect(cards.getByRole("listitem")).toHaveCount(2);
});
