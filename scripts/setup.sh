#!/usr/bin/env bash
# Installs the build tools Pickup needs, and only those, idempotently (make setup).
#   - the wasm32 standard library and its sources: rustup's target and rust-src if they can be
#     had, else Debian's rustc-web and rust-web-src (std is rebuilt for size: scripts/wasm-env.sh);
#   - wasm-bindgen-cli at exactly Cargo.lock's wasm-bindgen; wasm-opt (binaryen); esbuild, as a
#     minifier only. No bundler: scripts/build-widget.sh runs these and a small node script (Trunk
#     took 14 minutes to build).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .tools
# cargo install's bin directory, also when CARGO_HOME points elsewhere than ~/.cargo.
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

BINARYEN_VERSION=132
ESBUILD_VERSION=0.25.12
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)

say() { printf 'setup: %s\n' "$*"; }

apt_install() {
  if ! dpkg -s "$@" >/dev/null 2>&1; then
    say "installing Debian packages: $*"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  fi
}

# 1. The wasm32 standard library.
# The widget's build rebuilds std for size (-Zbuild-std), so it needs std's sources too.
if [ ! -s .tools/wasm-mode ]; then
  if timeout 45 rustup target add wasm32-unknown-unknown >/dev/null 2>&1 &&
     timeout 45 rustup component add rust-src >/dev/null 2>&1; then
    echo rustup > .tools/wasm-mode
  else
    say "rustup cannot download the wasm32 target here; using Debian's rustc-web + rust-web-src"
    echo debian > .tools/wasm-mode
  fi
fi
if [ "$(cat .tools/wasm-mode)" = debian ]; then
  apt_install rustc-web rust-web-src
fi
say "wasm32 std: $(cat .tools/wasm-mode)"

# 2. wasm-bindgen-cli, exactly the crate's version (not --locked: its lockfile pins a crate
#    version this registry mirror lacks).
if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION"
  cargo install --debug wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi

# 3. wasm-opt from npm's binaryen: installs in seconds (cargo's wasm-opt compiles C++ for 12 min).
if [ ! -x .tools/node_modules/.bin/wasm-opt ]; then
  say "installing binaryen@$BINARYEN_VERSION (wasm-opt)"
  npm install --silent --no-audit --no-fund --prefix .tools "binaryen@$BINARYEN_VERSION" >/dev/null
fi
# 4. esbuild, which minifies the JavaScript every embedding page loads (the glue and pickup.js):
#    a prebuilt binary from npm, installed in seconds.
if [ "$(.tools/node_modules/.bin/esbuild --version 2>/dev/null)" != "$ESBUILD_VERSION" ]; then
  say "installing esbuild@$ESBUILD_VERSION"
  npm install --silent --no-audit --no-fund --prefix .tools "esbuild@$ESBUILD_VERSION" >/dev/null
fi
say "ready: $(wasm-bindgen --version), wasm-opt $(.tools/node_modules/.bin/wasm-opt --version | awk '{print $3}'), esbuild $(.tools/node_modules/.bin/esbuild --version)"
