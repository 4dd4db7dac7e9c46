#!/usr/bin/env bash
# make bench, section 4: where the widget's bytes are. Installs twiggy once (~/.cargo/bin), then
# lists the 15 largest items of the widget's wasm into target/bench/twiggy.json.
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
twiggy top -n 16 -f json "$WORK/named.wasm" |
  node -e '
    const items = JSON.parse(require("fs").readFileSync(0, "utf8"))
      .filter((i) => !i.name.includes("\"function names\" subsection"))
      .slice(0, 15)
      .map(({ name, shallow_size }) => ({ name, shallow_size }));
    console.log(JSON.stringify({ file: "app_bg.wasm", items }, null, 2));
  ' > "$OUT/twiggy.json"
echo "twiggy: $OUT/twiggy.json"
