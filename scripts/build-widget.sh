#!/usr/bin/env bash
# make widget: the release build of the widget (crate `app`, feature `csr`) into dist/.
#   1. cargo builds the wasm (profile wasm-release, std rebuilt for size: scripts/wasm-env.sh);
#   2. wasm-bindgen writes the JS glue beside it (--target web: an ES module the loader imports);
#   3. wasm-opt -Oz shrinks it;
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
# --low-memory-unused: wasm-opt may assume the first 1 KiB of memory unused (shorter loads and
# stores); rustc's wasm32 places the 1 MiB stack first, so only an exhausted stack would reach it.
# --remove-exports: wasm-streams, which Leptos always links (for server_fn's streaming client,
# which the widget does not use), exports three JavaScript stream classes; removing their exports
# lets wasm-opt drop their code (1.8 KB gzipped). The glue's classes stay, never instantiated.
# Twice: the second run shrinks what the first left (measured: 98,502 -> 96,828 B gzipped); a
# third makes it larger again.
OPT=(-Oz --low-memory-unused --remove-exports --pass-arg='remove-exports@*intounderlying*')
wasm-opt "${OPT[@]}" "$STAGE/bindgen/app_bg.wasm" -o "$STAGE/bindgen/app_bg.once.wasm"
wasm-opt "${OPT[@]}" "$STAGE/bindgen/app_bg.once.wasm" -o "$STAGE/bindgen/app_bg.opt.wasm"
rm "$STAGE/bindgen/app_bg.once.wasm"
mv "$STAGE/bindgen/app_bg.opt.wasm" "$STAGE/bindgen/app_bg.wasm"

node scripts/site.mjs "$STAGE/bindgen" "$STAGE/dist"
# Swapped in whole, so a running server never serves a half-written site.
rm -rf dist.old
if [ -d dist ]; then mv dist dist.old; fi
mv "$STAGE/dist" dist
rm -rf dist.old
