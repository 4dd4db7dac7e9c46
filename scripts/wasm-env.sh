# Sourced by `make widget`: the environment of the wasm build, and only of it. The build gets its
# own target directory so host crates built by another rustc never invalidate the server's.
export CARGO_TARGET_DIR="$PWD/target/wasm"
export PATH="$PWD/.tools/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
if [ "$(cat .tools/wasm-mode 2>/dev/null)" = debian ]; then
  # rustup's rust-lld links; Debian's rustc 1.96 compiles std from rust-web-src.
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER="$(rustc --print sysroot)/lib/rustlib/x86_64-unknown-linux-gnu/bin/rust-lld"
  export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER
  export RUSTC=/usr/bin/rustc
fi
# The widget ships to every page that embeds it, so std is rebuilt for size (both modes):
# panics abort on the spot (no unwinding or panic messages), no Debug formatting, no panic
# locations, and std's size-optimised code paths. This cuts the gzipped wasm by about 15%.
export RUSTC_BOOTSTRAP=1
export CARGO_UNSTABLE_BUILD_STD=std,panic_abort
export CARGO_UNSTABLE_BUILD_STD_FEATURES=optimize_for_size
export RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort -Zfmt-debug=none -Zlocation-detail=none"
