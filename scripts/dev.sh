#!/usr/bin/env bash
# make dev: the watch-and-reload loop. A `pickup demo` serves the API on 127.0.0.1:3000 (its
# store is ./data, as `make run`'s), and `trunk serve` (Trunk.toml) builds the widget, serves it
# on 127.0.0.1:8080 with the API proxied to that demo, and rebuilds and reloads the page on every
# change to app/src, style, public or index.html. Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
PICKUP="${PICKUP:-target/debug/pickup}"
API=127.0.0.1:3000
PAGE=http://127.0.0.1:8080

PICKUP_SECRET="$(cat .dev-secret)"
export PICKUP_SECRET
"$PICKUP" demo --store file://./data --site target/trunk-dist --addr "$API" >/dev/null &
DEMO=$!
trap 'kill "$DEMO" 2>/dev/null || true; wait "$DEMO" 2>/dev/null || true' EXIT

token="$("$PICKUP" token --sub you --name You --ws demo --write --ttl 12h)"
echo "Pickup dev: open $PAGE/#ws=demo&token=$token (rebuilds and reloads on every change)"

# Trunk runs cargo, wasm-bindgen and wasm-opt with the widget build's environment.
source scripts/wasm-env.sh
trunk serve
