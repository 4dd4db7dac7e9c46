#!/usr/bin/env bash
# Checks that `trunk build` (Trunk.toml, make dev) and the scripts' build (make widget) give the
# same site: the same files in the same roles (a content hash or a folder aside), and index.html
# with the same markup: the same elements in <body>, the same stylesheet, icon and preloads in
# <head>, the same scripts. Not part of make test (it runs both release builds, minutes each):
#   scripts/check-trunk.sh          build both, then compare
#   scripts/check-trunk.sh --no-build   compare dist/ with target/trunk-dist/ as they are
# Differences that are meant, and said as such: the scripts' build bundles the modules pickup.js
# imports into it and inlines home.js, adds precompressed copies and a stable copy of
# the stylesheet; Trunk's page inlines home.js as it is (its imports are files there) and keeps the
# empty marker script site.mjs fills.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != "--no-build" ]; then
  ./scripts/build-widget.sh
  (source scripts/wasm-env.sh && trunk build --release)
fi
SCRIPTS_DIST="${SCRIPTS_DIST:-dist}"
TRUNK_DIST="${TRUNK_DIST:-target/trunk-dist}"
[ -f "$SCRIPTS_DIST/index.html" ] || { echo "check-trunk: no $SCRIPTS_DIST/index.html (make widget)" >&2; exit 1; }
[ -f "$TRUNK_DIST/index.html" ] || { echo "check-trunk: no $TRUNK_DIST/index.html (trunk build)" >&2; exit 1; }

node --input-type=module - "$SCRIPTS_DIST" "$TRUNK_DIST" <<'JS'
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
const [scripts, trunk] = process.argv.slice(2);
let failed = 0;
const say = (ok, what) => { console.log(`${ok ? "same" : "DIFFERENT"}: ${what}`); if (!ok) failed++; };
const walk = (d) => readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
// A file's role: its name without folder, content hash or compressed copy's suffix.
const role = (path) => path.split("/").pop().replace(/-[0-9a-f]{16}(?=[._])/, "");
const roles = (dir) => new Set(walk(dir).filter((p) => !/\.(br|gz)$/.test(p)).map((p) => role(relative(dir, p))));
const a = roles(scripts), b = roles(trunk);
// In pickup.js and index.html, in the scripts' build; files of their own in Trunk's.
const BUNDLED = new Set(["contract.js", "loader.js", "share.js", "drawing.js", "early.js"]);
const missing = [...a].filter((r) => !b.has(r));
const extra = [...b].filter((r) => !a.has(r) && !BUNDLED.has(r));
say(missing.length === 0 && extra.length === 0, `file roles: ${[...a].sort().join(", ")}` +
  (missing.length ? `; missing from Trunk's: ${missing}` : "") + (extra.length ? `; only in Trunk's: ${extra}` : ""));
for (const r of BUNDLED) console.log(`meant: ${r} is a file of its own in Trunk's site, bundled in the scripts'`);
// Every module a script of Trunk's site imports is there (a file left out breaks `make dev` in
// the browser, not the build).
const unresolved = walk(trunk).filter((p) => p.endsWith(".js")).flatMap((p) =>
  [...readFileSync(p, "utf8").matchAll(/from\s+["'](\.\/[^"']+)["']/g)]
    .map((m) => join(p, "..", m[1]))
    .filter((f) => { try { return !statSync(f).isFile(); } catch { return true; } })
    .map((f) => relative(trunk, f)));
say(unresolved.length === 0, `imports in Trunk's site resolve` + (unresolved.length ? `; missing: ${unresolved}` : ""));

const html = (dir) => readFileSync(join(dir, "index.html"), "utf8");
const attrs = (tag) => Object.fromEntries([...tag.matchAll(/([\w-]+)(?:="([^"]*)")?/g)].slice(1).map((m) => [m[1], m[2] ?? ""]));
// <body>'s elements, scripts aside: tag, class and data-pickup-* attributes, in order.
function body(text) {
  const b = text.slice(text.indexOf("<body"), text.indexOf("</body>")).replace(/<script[^]*?<\/script>/g, "");
  return [...b.matchAll(/<([a-z0-9]+)\b([^>]*)>/g)].map(([, tag, rest]) => {
    const at = attrs(`<${tag}${rest}>`);
    const kept = Object.keys(at).filter((k) => k === "class" || k.startsWith("data-pickup") || k === "aria-label").sort();
    return `${tag}${kept.map((k) => ` ${k}="${at[k]}"`).join("")}`;
  });
}
// <head>'s links, as rel + the role of what they name (Trunk's preloads repeat ours).
const links = (text) => new Set([...text.matchAll(/<link\b[^>]*>/g)].map(([t]) => attrs(t)).map((at) => `${at.rel} ${role(at.href ?? "")}`));
// Scripts, by role: the inlined head start (home.js asks for the first page), the loader, Trunk's.
function scriptRoles(text) {
  return [...text.matchAll(/<script\b([^>]*)>([^]*?)<\/script>/g)].map(([, at, js]) => {
    const src = attrs(`<s${at}>`).src;
    if (src) return `src ${role(src)}`;
    if (js.trim() === "") return "empty";
    if (/TrunkApplicationStarted|__trunk|wasmBindings/.test(js)) return "trunk's loader";
    if (/pickupPrefetch/.test(js)) return "inline home.js";
    return "inline other";
  });
}
const [ha, hb] = [html(scripts), html(trunk)];
say(JSON.stringify(body(ha)) === JSON.stringify(body(hb)), `<body> markup: ${body(ha).join(" > ")}`);
const [la, lb] = [links(ha), links(hb)];
say([...la].every((l) => lb.has(l)), `<head> links: ${[...la].join("; ")}` + ([...lb].filter((l) => !la.has(l)).length ? ` (Trunk's adds: ${[...lb].filter((l) => !la.has(l)).join("; ")})` : ""));
const [sa, sb] = [scriptRoles(ha), scriptRoles(hb)];
const wanted = sa.filter((s) => s !== "empty");
say(wanted.every((s) => sb.includes(s)), `scripts: scripts' build [${sa.join(", ")}], Trunk's [${sb.join(", ")}]`);
const size = (dir, re) => walk(dir).filter((p) => re.test(p) && !/\.(br|gz)$/.test(p)).map((p) => statSync(p).size)[0];
console.log(`wasm: ${size(scripts, /_bg\.wasm$/)} B (scripts' build, wasm-opt twice), ${size(trunk, /_bg\.wasm$/)} B (Trunk's)`);
process.exit(failed ? 1 : 0);
JS
