// The shared tables of cases (app/tests/cases/*.json), run against the shipped JavaScript that
// keeps part of a Rust rule: public/share.js (a stream's views, which pages serve a widget, the
// server-sent events), public/drawing.js (the query of the drawing asked for ahead) and
// public/pickup-element.js (notify). app/tests/cases.rs runs the same files against the Rust
// rules. `make test-js`:
//   node --experimental-detect-module --test app/tests/cases.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const table = (name) => JSON.parse(readFileSync(new URL(`./cases/${name}.json`, import.meta.url), "utf8"));
// pickup-element.js defines its class on import; nothing of it runs here but `notifyOn`.
globalThis.HTMLElement ??= class {};
const { union, query, serves, sse } = await import("../../public/share.js");
const { drawingQuery } = await import("../../public/drawing.js");
const { notifyOn } = await import("../../public/pickup-element.js");

test("a stream's views: per filter the largest cap, written as the server reads them", () => {
  for (const { why, wanted, views, query: written } of table("live").views) {
    assert.deepEqual(union(wanted), views, why);
    assert.equal(query(union(wanted)), written, why);
  }
});

test("which pages of a shared stream serve a widget", () => {
  for (const { why, view, page, shown } of table("live").pages) assert.equal(serves(page, view), shown !== null, why);
});

test("server-sent events, as the server writes them, in chunks", async () => {
  for (const { why, chunks, events } of table("live").events) {
    const read = [];
    const reader = new ReadableStream({
      start(c) {
        for (const chunk of chunks) c.enqueue(chunk);
        c.close();
      },
    })
      .pipeThrough(sse())
      .getReader();
    for (let r; !(r = await reader.read()).done; ) read.push(r.value);
    assert.deepEqual(read, events.map((e) => ({ name: undefined, ...e })), why);
  }
});

test("the loader asks for the drawing with the cap as written", () => {
  for (const { given, asked } of table("options").cap) assert.equal(String(drawingQuery({ cap: given ?? undefined })), asked, JSON.stringify(given));
});

test("notify: present and not \"false\"", () => {
  for (const { given, on } of table("notify").notify) assert.equal(notifyOn(given), on, JSON.stringify(given));
});
