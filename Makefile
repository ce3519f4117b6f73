# WebMCP Host. `make test` and `make demo` install what is missing first (idempotently).
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)
export CHROMIUM ?= /usr/bin/chromium
export CHROMEDRIVER ?= /usr/bin/chromedriver
# Browsers come from Debian only: npm packages never download one.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1

WASM_TARGET := wasm32-unknown-unknown
# The shipped module builds in its own target directory (`target/ship`), so that another
# build can run beside it: `make test` builds the native tests then, at the lowest priority,
# on the core the module's single-threaded end (LTO, wasm-opt) leaves idle.
SHIP_DIR := target/ship
WASM := $(SHIP_DIR)/$(WASM_TARGET)/wasm/webmcp_host.wasm
WASM_OPT := node node_modules/binaryen/bin/wasm-opt

.PHONY: build setup setup-browser check check-wasm check-beside test test-native test-agui test-local-model test-mcp test-wasm test-e2e flakes test-playwright test-release release demo demo-local eval-local record-corpus bench clean

## build: assemble the unpacked extension in extension/
# wasm-opt runs -Oz twice and inlines a function with one caller only when it is small (at
# most 15 expressions): -Oz alone inlines them all, which saves 0.1% of the raw bytes and costs
# 10% more gzip bytes. Last it sorts the functions by name, the names that
# scripts/order-functions.mjs gives them so that alike code sits together for gzip, and strips
# the names. What each step saves: docs/testing.md, "Where the bytes go".
build: setup
	cargo build --lib --profile wasm --target $(WASM_TARGET) --target-dir $(SHIP_DIR)
	wasm-bindgen --target web --no-typescript --out-dir target/bindgen --out-name webmcp_host $(WASM)
	node scripts/order-functions.mjs target/bindgen/webmcp_host_bg.wasm
	$(WASM_OPT) -Oz -Oz --one-caller-inline-max-function-size 15 --reorder-functions-by-name \
	  --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
	  --enable-mutable-globals --enable-reference-types --enable-multivalue \
	  --strip-debug --strip-producers target/bindgen/webmcp_host_bg.wasm -o target/bindgen/webmcp_host_bg.wasm
	node scripts/assemble.mjs

setup:
	@scripts/setup.sh

setup-browser:
	@scripts/setup.sh --browser

## test: every test: native, wasm in headless Chromium, end-to-end with the extension loaded
# Work runs beside others at the lowest priority (`nice -n 19`): the native tests build while
# the shipped module builds (whose LTO and wasm-opt use one core), and while the end-to-end
# suites run (they wait on the browser far more than they compute: about 30% of two cores)
# the wasm tests build and the wasm shell's lint and both doc builds run (`check-beside`).
# `test-native` with `check-beside` is `make check`. Each builds in a target directory no
# other step waits on.
test: setup-browser
	@$(call beside,test-native-build,cargo test --quiet --no-run,build)
	@$(MAKE) --no-print-directory test-native test-agui test-local-model test-mcp
	@$(call beside,check-beside,$(MAKE) --no-print-directory check-beside,test-e2e)
	@$(MAKE) --no-print-directory test-wasm test-playwright test-release

# $(call beside,LOG,COMMAND,TARGET): COMMAND at the lowest priority (its output in
# target/LOG.log, shown if it fails) while `make TARGET` runs; fails if either does.
beside = mkdir -p target; nice -n 19 $(2) > target/$(1).log 2>&1 & pid=$$!; \
  $(MAKE) --no-print-directory $(3); status=$$?; \
  if ! wait $$pid; then echo "$(2) failed:"; cat target/$(1).log; exit 1; fi; \
  exit $$status

## check: the fast loop: formatting, clippy (native, and the wasm shell), doc links and the native tests
check: test-native check-wasm

test-native: setup
	cargo fmt --check
	cargo clippy --all-targets --quiet -- -D warnings
	cargo test

# The wasm shell's lint and the doc links (native and wasm).
check-wasm: setup
	cargo clippy --lib --target $(WASM_TARGET) --quiet -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --lib --no-deps --quiet
	RUSTDOCFLAGS="-D warnings" cargo doc --lib --no-deps --quiet --target $(WASM_TARGET)

# Beside the end-to-end suites in `make test`: the wasm tests' build, then `check-wasm`.
check-beside:
	scripts/test-wasm.sh --build
	$(MAKE) --no-print-directory check-wasm

## test-agui: the official AG-UI validators over the core's golden event logs
test-agui:
	node --test --test-reporter=spec tests/agui/

## test-local-model: the local model server's request checks (scripts/local-model/http.mjs) with a stub in the model's
## place: the attacks a web page can make on it refused (no GGUF, no browser; a second)
test-local-model:
	node --test --test-reporter=spec tests/local-model/

## test-mcp: real MCP servers and the official MCP conformance suite (client scenarios one by one, then the auth suite) against the CLI
# The files run two at a time: they wait on servers far more than they compute.
test-mcp:
	cargo build --bin webmcp-host
	node --test --test-reporter=spec --test-concurrency=2 tests/mcp/
	node scripts/mcp/run-conformance.mjs --command "exec $(CURDIR)/target/debug/webmcp-host mcp --conformance"

# Built without debug info: with it the test module is ~110 MB and its load in the runner's
# browser took 2 minutes here (and passed the runner's limit on a slower machine); without
# it, 17 MB and about 4 s. Each attempt gets 30 s, and a run whose page never reported a
# result is retried (scripts/test-wasm.sh says why and when).
test-wasm:
	scripts/test-wasm.sh

test-e2e:
	PW_EXPERIMENTAL_SERVICE_WORKER_NETWORK_EVENTS=1 node --test --test-reporter=spec --test-concurrency=1 tests/e2e/ tests/support/

## flakes: the end-to-end suites FLAKES_N times (default 3), with one core kept busy when FLAKES_BUSY=1; prints each test
## that failed with how often, and fails if any did (docs/testing.md). Run it before stopping on a change to a browser suite
flakes: setup-browser build
	node scripts/flakes.mjs

## test-playwright: the Playwright Test package (packages/playwright-webmcp-host): its matchers, its fixture against the demo shop and fixture pages, its example's shards
test-playwright:
	node node_modules/@playwright/test/cli.js test -c packages/playwright-webmcp-host/tests

## test-release: the release as a stranger gets it: the extension's zip unzipped and loaded, the package packed, installed in an empty folder and its example run there
test-release:
	node --test --test-reporter=spec tests/release/

## release: dist/: the extension's zip, the Playwright package's tarball, the CLI's release build, SHA256SUMS
release: build
	node scripts/release.mjs

## demo: the demo site in Chromium with the extension (headless without a display)
demo: setup-browser build
	node scripts/demo.mjs

## demo-local: the demo on a real local model, no key: our server on node-llama-cpp 3.21.1 on 127.0.0.1 and the pinned
## Qwen2.5-Coder-1.5B GGUF (or WEBMCP_HOST_GGUF), both installed once in ~/.cache/webmcp-host (docs/local-models.md)
demo-local: setup-browser build
	nice -n 19 node scripts/demo-local.mjs

## eval-local: the demo shop's evals in agent mode on the local model; prints pass^k, fails under EVAL_LOCAL_THRESHOLD
## (default 0.5). Slow and never part of `make test`: a job of its own that need not gate
eval-local: setup-browser build
	nice -n 19 node scripts/eval-local.mjs

## record-corpus: record the genuine-output corpus (tests/corpus/) again on the local model (minutes; SET=text)
record-corpus:
	nice -n 19 node scripts/record-corpus.mjs --set $(or $(SET),text)

## bench: core throughput and latency natively; what each crate costs in the wasm; wasm size, worker cold start and MCP listing in Chromium; keep-alive (~6 min)
bench: setup-browser build
	BENCH_PIPELINE_OUTPUTS=target/bench cargo run --release --quiet --example bench_core
	node scripts/size.mjs
	node scripts/bench.mjs
	node scripts/keepalive.mjs

clean:
	cargo clean
	node -e "for (const f of require('fs').readdirSync('extension')) if (f !== 'README.md') require('fs').rmSync('extension/' + f, {recursive: true})"
