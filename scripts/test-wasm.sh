#!/usr/bin/env bash
# The wasm shell's tests in a real service worker (wasm-bindgen-test-runner, headless Chromium).
#
# The runner decides that tests ran by reading "test result:" from its page. Now and then
# (seen on a loaded 2-core machine, most often right after a long build) its service-worker
# page never reports (most likely: the runner registers the worker, then waits for a
# `controllerchange` that a worker which activated and claimed the page first never fires
# again). The runner
# then prints "Failed to detect test as having been run" and fails although no test ran.
# Such a run is retried in a fresh browser, at most 4 more times; a healthy run takes about
# 5 s, so each attempt gets 30 s (a stuck attempt cost 60 s each before: seen twice in a row
# on a fresh clone, 2 minutes lost). A run that reports a result, failed or not, is final.
#
# `--build` only builds the tests (make test runs it at the lowest priority while the
# end-to-end suites run, which leave most of the machine idle). The tests build in their own
# target directory, so that this build never holds the lock of `target/` that other steps
# (the CLI, `cargo run`) take meanwhile.
set -uo pipefail

export CARGO_PROFILE_TEST_DEBUG=false CARGO_PROFILE_DEV_DEBUG=false
target_dir=target/wasm-tests
if [ "${1:-}" = "--build" ]; then
  exec cargo test --quiet --target wasm32-unknown-unknown --target-dir "$target_dir" --test wasm_worker --no-run
fi

attempts=5
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for attempt in $(seq 1 "$attempts"); do
  WASM_BINDGEN_TEST_TIMEOUT=${WASM_BINDGEN_TEST_TIMEOUT:-30} \
    cargo test --target wasm32-unknown-unknown --target-dir "$target_dir" --test wasm_worker 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  if [ "$status" -eq 0 ]; then exit 0; fi
  if grep -q "test result:" "$log" || ! grep -q "Failed to detect test as having been run" "$log"; then
    exit "$status"
  fi
  echo "test-wasm: the runner's page reported no result (attempt $attempt of $attempts)" >&2
done
exit 1
