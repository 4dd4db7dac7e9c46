import { defineConfig } from "@playwright/test";

// Debian's Chromium (`make e2e-deps` installs it); Playwright never downloads a browser here.
export default defineConfig({
  testDir: "./tests",
  timeout: 60_000,
  expect: { timeout: 10_000 },
  // Each test starts its own `pickup serve` (own port, store and secret), so spec files run on
  // three workers (a test mostly waits on its browser and server, so a third keeps both cores
  // busy); the tests of one file run in order.
  fullyParallel: false,
  workers: 3,
  forbidOnly: !!process.env.CI,
  reporter: [["list"]],
  use: {
    browserName: "chromium",
    launchOptions: {
      executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    },
    trace: "retain-on-failure",
  },
});
