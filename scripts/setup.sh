#!/usr/bin/env bash
# Installs what the build and the tests need, only where it is missing, so it is safe to run
# every time. `--browser` also installs Chromium and ChromeDriver from Debian's packages.
#
# Each step prints one line (what it installs, then how long it took); what the installer
# itself printed goes to target/setup/STEP.log, and only a failing step shows it (its last
# 40 lines).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

say() { printf 'setup: %s\n' "$*"; }
logs=target/setup
mkdir -p "$logs"

# step NAME WHAT COMMAND...: runs COMMAND with its output in $logs/NAME.log.
step() {
  local name=$1 what=$2 started=$SECONDS
  shift 2
  printf 'setup: %s … ' "$what"
  if "$@" >"$logs/$name.log" 2>&1; then
    printf 'done in %d s\n' $((SECONDS - started))
  else
    local status=$?
    printf 'FAILED (exit %d); the last lines of %s:\n' "$status" "$logs/$name.log"
    tail -n 40 "$logs/$name.log" >&2
    exit "$status"
  fi
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# (Steps run in an `if`, where `set -e` does not hold: each command is chained.)
apt_install() {
  as_root apt-get update -qq &&
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

# The wasm-bindgen CLI must be exactly the version the crate pins.
wasm_bindgen_version=$(sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' Cargo.toml)
[ -n "$wasm_bindgen_version" ] || { echo "setup: no pinned wasm-bindgen in Cargo.toml" >&2; exit 1; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  step rustup-target "adding the wasm32-unknown-unknown target" rustup target add wasm32-unknown-unknown
fi

if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $wasm_bindgen_version" ]; then
  # Not --locked: its lockfile names a webpki-roots release the registry no longer serves.
  step wasm-bindgen "installing wasm-bindgen-cli $wasm_bindgen_version (built from crates.io, about 4 minutes on 2 cores)" \
    cargo install --quiet wasm-bindgen-cli --version "=$wasm_bindgen_version" --force
fi

# npm packages, exactly as the committed lockfile says; reinstalled only when it changed.
npm_install() {
  npm ci --no-audit --no-fund --loglevel=error &&
    cp package-lock.json node_modules/.installed-package-lock.json
}
if ! cmp -s package-lock.json node_modules/.installed-package-lock.json 2>/dev/null; then
  step npm "installing the npm packages of package-lock.json" npm_install
fi

if [ "${1:-}" = "--browser" ]; then
  if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ] || ! command -v unzip >/dev/null; then
    step apt-chromium "installing chromium, chromium-driver and unzip from Debian" apt_install chromium chromium-driver unzip
  fi
fi

# Arize Phoenix (PyPI `arize-phoenix`), the trace viewer tests/e2e/traces.test.mjs exports runs
# to: one virtual environment per user, shared by every checkout (PHOENIX_VENV to move it).
phoenix_install() {
  local venv=$1
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    apt_install python3-venv || return
  fi
  python3 -m venv "$venv" &&
    "$venv/bin/pip" install --quiet --disable-pip-version-check arize-phoenix
}
if [ "${1:-}" = "--browser" ]; then
  phoenix_venv="${PHOENIX_VENV:-$HOME/.cache/webmcp-host/phoenix-venv}"
  if [ ! -x "$phoenix_venv/bin/phoenix" ]; then
    step phoenix "installing arize-phoenix into $phoenix_venv (from PyPI, a few minutes)" phoenix_install "$phoenix_venv"
  fi
fi
