#!/usr/bin/env bash
# The wasm shell's tests in a real service worker (wasm-bindgen-test-runner, headless Chromium).
#
# The runner decides that tests ran by reading "test result:" from its page. On a cold
# machine its service-worker page sometimes never reports (the runner then prints "Failed
# to detect test as having been run" and fails although no test failed). Such a run is
# retried, at most twice; a run that reports a result, failed or not, is final.
set -uo pipefail

attempts=3
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for attempt in $(seq 1 "$attempts"); do
  CARGO_PROFILE_TEST_DEBUG=false CARGO_PROFILE_DEV_DEBUG=false WASM_BINDGEN_TEST_TIMEOUT=180 \
    cargo test --target wasm32-unknown-unknown --test wasm_worker 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  if [ "$status" -eq 0 ]; then exit 0; fi
  if grep -q "test result:" "$log" || ! grep -q "Failed to detect test as having been run" "$log"; then
    exit "$status"
  fi
  echo "test-wasm: the runner's page reported no result (attempt $attempt of $attempts)" >&2
done
exit 1
