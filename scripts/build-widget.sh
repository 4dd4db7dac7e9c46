#!/usr/bin/env bash
# make widget: the release build of the widget (crate `app`, feature `csr`) into dist/.
#   1. cargo builds the wasm (profile wasm-release, std rebuilt for size: scripts/wasm-env.sh);
#   2. wasm-bindgen writes the JS glue beside it (--target web: an ES module the loader imports);
#   3. wasm-opt -Oz shrinks it (scripts/wasm-opt.sh);
#   4. scripts/site.mjs assembles the site: hashed names, the loader and index.html filled in,
#      Brotli and gzip copies.
# No bundler is installed for this: these four steps are all Trunk did for us, and building Trunk
# was half of a newcomer's first `make run` (issue 16).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/wasm-env.sh

cargo build -p app --lib --target wasm32-unknown-unknown --profile wasm-release \
  --no-default-features --features csr
RAW="$CARGO_TARGET_DIR/wasm32-unknown-unknown/wasm-release/app.wasm"

STAGE="$CARGO_TARGET_DIR/site"
rm -rf "$STAGE"
mkdir -p "$STAGE/bindgen"
wasm-bindgen --target web --no-typescript --out-dir "$STAGE/bindgen" --out-name app "$RAW"
scripts/wasm-opt.sh "$STAGE/bindgen/app_bg.wasm" "$STAGE/bindgen/app_bg.opt.wasm"
mv "$STAGE/bindgen/app_bg.opt.wasm" "$STAGE/bindgen/app_bg.wasm"

node scripts/site.mjs "$STAGE/bindgen" "$STAGE/dist"
# Swapped in whole, so a running server never serves a half-written site.
rm -rf dist.old
if [ -d dist ]; then mv dist dist.old; fi
mv "$STAGE/dist" dist
rm -rf dist.old
