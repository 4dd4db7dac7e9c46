import { defineConfig } from "@playwright/test";
import base from "./playwright.config";

// `make bench` only: measurements, not tests.
export default defineConfig({ ...base, testDir: "./bench", testMatch: "**/*.bench.ts" });
