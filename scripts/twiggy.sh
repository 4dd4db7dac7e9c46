#!/usr/bin/env bash
# make bench, section 4: where the widget's bytes are. Installs twiggy once (~/.cargo/bin), then
# writes target/bench/twiggy.json: the 15 largest items of the widget's wasm, its bytes by app
# module and crate, and pickup.js's bytes by module.
#
# dist/app_bg.wasm has no names (wasm-opt drops them), so this builds the same file with them:
# the raw wasm `make widget` left in target/wasm, through the same wasm-bindgen and
# scripts/wasm-opt.sh as scripts/build-widget.sh, with -g to keep the name section.
# Its code is the shipped code; only the names are added (twiggy's row for them is left out).
set -euo pipefail
cd "$(dirname "$0")/.."
TWIGGY_VERSION=0.8.0
RAW=target/wasm/wasm32-unknown-unknown/wasm-release/app.wasm
OUT=target/bench
WORK=target/bench/twiggy-build
export PATH="$PWD/.tools/node_modules/.bin:$HOME/.cargo/bin:$PATH"

if ! twiggy --version 2>/dev/null | grep -qF "$TWIGGY_VERSION"; then
  echo "twiggy: installing $TWIGGY_VERSION into ~/.cargo/bin"
  cargo install --locked --quiet --version "$TWIGGY_VERSION" twiggy
fi
[ -f "$RAW" ] || { echo "twiggy: $RAW is missing: run make widget" >&2; exit 1; }

mkdir -p "$WORK"
wasm-bindgen --target web --out-dir "$WORK" --out-name app "$RAW"
scripts/wasm-opt.sh "$WORK/app_bg.wasm" "$WORK/named.wasm" -g --enable-bulk-memory \
  --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals
# The 15 largest items; every item's bytes by what it is of (an app module, else its crate);
# and the JavaScript's bytes by module (esbuild's metafile of pickup.js, written by
# scripts/site.mjs), beside the glue's.
twiggy top -n 1000000 -f json "$WORK/named.wasm" > "$WORK/top.json"
node - "$WORK/top.json" target/wasm/site/esbuild/pickup.js.json dist/assets > "$OUT/twiggy.json" <<'JS'
const fs = require("fs");
const [top, meta, assets] = process.argv.slice(2);
const items = JSON.parse(fs.readFileSync(top, "utf8"))
  .filter((i) => !i.name.includes('"function names" subsection'))
  .map(({ name, shallow_size }) => ({ name, shallow_size }));
// What an item is of: the first app module its name mentions (a generic of a framework
// instantiated for the app's types is the app's cost), else the crate it starts with.
function owner(name) {
  const plain = name.replace(/\[[0-9a-f]{16}\]/g, "");
  const app = plain.match(/\bapp::((?:components::)?[a-z_]+)/);
  if (app) return `app::${app[1]}`;
  if (plain.startsWith("data segment")) return "data segments (strings, tables)";
  if (plain.startsWith("import ")) return "imports (the glue's functions)";
  const crate = plain.match(/^[<(&\s]*(?:dyn |_ as )?([a-z_][a-z0-9_]*)::/);
  return crate ? crate[1] : "unnamed (shims, exports, element and code sections)";
}
const groups = {};
for (const i of items) groups[owner(i.name)] = (groups[owner(i.name)] ?? 0) + i.shallow_size;
const outputs = Object.values(JSON.parse(fs.readFileSync(meta, "utf8")).outputs);
const js = {};
for (const out of outputs) for (const [input, { bytesInOutput }] of Object.entries(out.inputs)) js[input.split("/").pop()] = bytesInOutput;
const glue = fs.readdirSync(assets).find((f) => /^app-[0-9a-f]{16}\.js$/.test(f));
js["app.js (wasm-bindgen's glue)"] = fs.statSync(`${assets}/${glue}`).size;
const sorted = (o) => Object.fromEntries(Object.entries(o).sort((a, b) => b[1] - a[1]));
console.log(JSON.stringify({ file: "app_bg.wasm", items: items.slice(0, 15), groups: sorted(groups), js: sorted(js) }, null, 2));
JS
echo "twiggy: $OUT/twiggy.json"
