# Pickup. `make run` and `make test` are the two commands; everything they need is installed by
# the targets below, idempotently.
SHELL := /bin/bash
.DEFAULT_GOAL := run

PICKUP     := target/debug/pickup
WIDGET_SRC := $(shell find app/src style public -type f) app/Cargo.toml index.html Cargo.lock Cargo.toml
SERVER_SRC := $(shell find server/src app/src -type f) server/Cargo.toml app/Cargo.toml Cargo.lock

.PHONY: setup widget server run dev test test-rust test-js test-e2e e2e-deps bench fmt lint clean

## setup: build tools (wasm32 std, wasm-bindgen-cli, wasm-opt, esbuild)
setup:
	@./scripts/setup.sh

## widget: the release build of the widget into dist/ (only when its sources changed)
widget: dist/index.html
dist/index.html: $(WIDGET_SRC) scripts/wasm-env.sh scripts/build-widget.sh scripts/wasm-opt.sh scripts/site.mjs | setup
	+./scripts/build-widget.sh

## server: the pickup binary
server: $(PICKUP)
$(PICKUP): $(SERVER_SRC)
	cargo build -p pickup
	@touch $@

# A development secret, made once per checkout and never committed; readable by its owner only.
.dev-secret:
	@umask 077 && head -c 32 /dev/urandom | base64 > $@

# The tools, the widget and the server, two at a time: the server compiles while setup installs
# wasm-bindgen-cli and while the widget's single-threaded link-time optimisation runs, so neither
# core waits (a first run on 2 cores is mostly these builds).
.PHONY: builds
builds:
	@$(MAKE) --no-print-directory -j2 widget server

## run: the demo workspace on http://127.0.0.1:3000 (prints a link that opens it signed in)
run: builds .dev-secret
	PICKUP_SECRET="$$(cat .dev-secret)" $(PICKUP) demo --store file://./data --site dist

## dev: the widget on http://127.0.0.1:8080 by `trunk serve` (Trunk.toml), rebuilt and reloaded on
## every change, with the API proxied to a `pickup demo` (scripts/dev.sh); Trunk is installed on
## first use (a long build, so at the lowest priority)
TRUNK := $(or $(CARGO_HOME),$(HOME)/.cargo)/bin/trunk
$(TRUNK):
	nice -n 19 cargo install trunk --version 0.21.14 --locked
dev: setup server .dev-secret | $(TRUNK)
	PATH="$(dir $(TRUNK)):$$PATH" ./scripts/dev.sh

## test: cargo tests (the widget builds beside them), the emulator tests, then the Playwright
## suite in Debian's Chromium; each target says how long it took
# The test binaries build first, on both cores, while the tools install; then the widget builds
# while the Rust tests and the emulator tests run (they mostly wait on processes and sockets).
test: deps
	@$(MAKE) --no-print-directory -j2 test-build test-tools
	@$(MAKE) --no-print-directory -j3 test-rust test-js test-widget test-backends
	@$(MAKE) --no-print-directory test-e2e
	@$(MAKE) --no-print-directory test-engines

.PHONY: test-build test-tools test-widget
test-build:
	@$(call timed,test-build,cargo test --workspace --no-run)
test-tools: setup e2e-deps
	@./scripts/emulators.sh install
test-widget: setup
	@$(call timed,widget,$(MAKE) --no-print-directory widget)

# Every Debian package the suite needs, after one `apt-get update`, and only when one is missing:
# the services the Rust tests start themselves on free loopback ports (Redis for the bus, nginx
# for the rolling restart, libfaketime for servers with other clocks; none is ever started as a
# system service), the browsers (Chromium for Playwright; Firefox ESR and WebKitGTK's WebDriver,
# under Xvfb, for the engines' smoke run: Playwright's own builds of those cannot be had here).
DEBIAN_DEPS := redis-server nginx faketime chromium firefox-esr webkit2gtk-driver xvfb
.PHONY: deps
deps:
	@dpkg -s $(DEBIAN_DEPS) >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEBIAN_DEPS) >/dev/null; }

# `$(call timed,LABEL,COMMAND)`: runs COMMAND, then says how long it took, whatever it did.
timed = start=$$(date +%s); $(2); status=$$?; echo "$(1): $$(( $$(date +%s) - start )) s"; exit $$status

# The Azure and S3 tests need their emulators: every one of them sits in a module named `azure`
# or `s3`. Here they are filtered out (test-backends runs them), not reported as passed. The
# last lines say how many tests did not run, and why.
test-rust: setup deps
	+@set -o pipefail; $(call timed,test-rust,cargo test --workspace --no-fail-fast -- --skip azure:: --skip s3:: 2>&1 | ./scripts/test-summary.sh test-rust)
	@echo "test-rust: the filtered out are azure::* and s3::*: make test-backends runs them on Azurite and moto"

## test-js: the shared tables of cases (app/tests/cases/*.json) against the shipped JavaScript
## that keeps part of a Rust rule (app/tests/cases.rs runs them against the Rust, in test-rust);
## Node's own runner, no npm package, under a second
test-js:
	@$(call timed,test-js,node --experimental-detect-module --no-warnings --test app/tests/cases.test.mjs)

## test-backends: the marker index on real object stores (Azurite for Azure Blob, moto for S3,
## on free 127.0.0.1 ports; the local file system too) and two `pickup serve` on one shared store
.PHONY: test-backends
# Only the tests test-rust filtered out (azure::*, s3::*), in two emulator sessions at once, each
# with its own fresh emulators: Azurite's in-memory store slows with every blob it holds, and
# scenarios run after the scale-out's thousands saw requests time out at 30 s. The two wait on
# the emulators more than on the cores, so side by side they take little longer than the longer
# one alone. Each session's output is kept apart and printed whole when both are done.
# `--workspace`, as test-rust builds: the same features, so the same artifacts (with `-p pickup`
# cargo rebuilt a few crates for pickup's own feature set).
BACKEND_SESSION = ./scripts/emulators.sh run -- cargo test --workspace --no-fail-fast --test $(1) -- azure:: s3:: --nocapture
test-backends: setup deps
	+@set -o pipefail; out=$$(mktemp -d); trap 'rm -rf "$$out"' EXIT; \
	  $(call timed,test-backends,{ $(call BACKEND_SESSION,scenarios) >$$out/scenarios 2>&1 & first=$$!; \
	  $(call BACKEND_SESSION,server) >$$out/server 2>&1; b=$$?; wait $$first; a=$$?; \
	  cat $$out/scenarios $$out/server; exit $$((a | b)); } 2>&1 | ./scripts/test-summary.sh test-backends)

e2e-deps: deps
	@[ end2end/node_modules/.installed -nt end2end/package-lock.json ] || \
	  { (cd end2end && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --silent --no-audit --no-fund) && touch end2end/node_modules/.installed; }

test-e2e: builds e2e-deps
	@$(call timed,test-e2e,cd end2end && PICKUP_BIN=$(CURDIR)/$(PICKUP) PICKUP_SITE=$(CURDIR)/dist npx playwright test)

## test-engines: the widget in Firefox ESR (WebDriver BiDi) and WebKitGTK (WebKitWebDriver, under
## Xvfb): home page, live, <pickup-recent>, a refused stream; no uncaught error, one wasm fetch
.PHONY: test-engines
test-engines: builds e2e-deps
	@$(call timed,test-engines,cd end2end && PICKUP_BIN=$(CURDIR)/$(PICKUP) PICKUP_SITE=$(CURDIR)/dist xvfb-run -a node --experimental-detect-module --no-warnings engines/smoke.mjs)

## bench: every benchmark in one run, written to BENCHMARKS.md and docs/bench/*.svg (~13 min after the
## builds); fails, once the report is written, when Lighthouse's median performance is below 95
bench: setup widget e2e-deps
	@command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
	cargo build --release -p pickup -p pickup-bench
	./scripts/emulators.sh run -- target/release/pickup-bench designs
	./scripts/emulators.sh run -- target/release/pickup-bench read
	python3 scripts/bench_http.py
	python3 scripts/bench_bus.py
	./scripts/emulators.sh run -- python3 scripts/bench_reconcile.py
	./scripts/twiggy.sh
	cd end2end && PICKUP_BIN=$(CURDIR)/target/release/pickup PICKUP_SITE=$(CURDIR)/dist \
	  npx playwright test --config playwright.bench.config.ts
	@status=0; PICKUP_BIN=target/release/pickup node scripts/lighthouse.mjs || status=$$?; \
	  target/release/pickup-bench report && exit $$status

## bench-lighthouse: section 10 alone, Lighthouse's mobile run of the home page (~40 s), into
## target/bench/lighthouse.json; fails when its median performance is below 95
.PHONY: bench-lighthouse
bench-lighthouse: builds e2e-deps
	PICKUP_BIN=$(CURDIR)/$(PICKUP) node scripts/lighthouse.mjs

## bench-scale: issue 35.6, a thousand workspaces per server (3 servers, one Redis, 1,000
## workspaces of 50 items, 5,000 streams, 10 min idle, 10 min at 20 writes/s, a restart) into
## target/bench/scale.json, then BENCHMARKS.md with its section 8 (~25 min)
.PHONY: bench-scale
bench-scale:
	@command -v redis-server >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; }
	cargo build --release -p pickup -p pickup-bench
	python3 scripts/bench_scale.py
	target/release/pickup-bench report

fmt:
	cargo fmt --all

# The widget's browser code (feature csr) only compiles for wasm32, so it is linted there too.
lint: setup
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	source scripts/wasm-env.sh && cargo clippy -p app --lib --target wasm32-unknown-unknown \
	  --no-default-features --features csr -- -D warnings

clean:
	rm -rf target dist

