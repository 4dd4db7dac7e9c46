#!/usr/bin/env bash
# The widget's wasm, optimised for size: `scripts/wasm-opt.sh IN OUT [more wasm-opt flags]`.
# Used by build-widget.sh (the shipped file) and twiggy.sh (the same, with -g to keep names), so
# what twiggy measures is what ships. wasm-opt must be on PATH (make setup: npm's binaryen).
#
# --low-memory-unused: wasm-opt may assume the first 1 KiB of memory unused (shorter loads and
# stores); rustc's wasm32 places the 1 MiB stack first, so only an exhausted stack would reach it.
# (wasm-streams, which Leptos links for server_fn's streaming client, is a stand-in with no
# classes: stubs/wasm-streams, so there are no exports of its to remove.)
# Twice: the second run shrinks what the first left (measured: 98,502 -> 96,828 B gzipped); a
# third makes it larger again.
set -euo pipefail
IN=$1 OUT=$2
shift 2
OPT=(-Oz --low-memory-unused "$@")
wasm-opt "${OPT[@]}" "$IN" -o "$OUT.once"
wasm-opt "${OPT[@]}" "$OUT.once" -o "$OUT"
rm "$OUT.once"
