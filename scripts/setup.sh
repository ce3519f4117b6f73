#!/usr/bin/env bash
# Installs what the build and the tests need, only where it is missing, so it is safe to run
# every time. `--browser` also installs Chromium and ChromeDriver from Debian's packages.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

say() { printf 'setup: %s\n' "$*"; }

# The wasm-bindgen CLI must be exactly the version the crate pins.
wasm_bindgen_version=$(sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' Cargo.toml)
[ -n "$wasm_bindgen_version" ] || { echo "setup: no pinned wasm-bindgen in Cargo.toml" >&2; exit 1; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $wasm_bindgen_version" ]; then
  say "installing wasm-bindgen-cli $wasm_bindgen_version (a few minutes)"
  # Not --locked: its lockfile names a webpki-roots release the registry no longer serves.
  cargo install wasm-bindgen-cli --version "=$wasm_bindgen_version" --force
fi

# npm packages, exactly as the committed lockfile says; reinstalled only when it changed.
if ! cmp -s package-lock.json node_modules/.installed-package-lock.json 2>/dev/null; then
  say "installing npm packages from package-lock.json"
  npm ci --no-audit --no-fund
  cp package-lock.json node_modules/.installed-package-lock.json
fi

if [ "${1:-}" = "--browser" ]; then
  if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ] || ! command -v unzip >/dev/null; then
    say "installing chromium, chromium-driver and unzip from Debian"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium chromium-driver unzip
  fi
fi

# Arize Phoenix (PyPI `arize-phoenix`), the trace viewer tests/e2e/traces.test.mjs exports runs
# to: one virtual environment per user, shared by every checkout (PHOENIX_VENV to move it).
if [ "${1:-}" = "--browser" ]; then
  phoenix_venv="${PHOENIX_VENV:-$HOME/.cache/webmcp-host/phoenix-venv}"
  if [ ! -x "$phoenix_venv/bin/phoenix" ]; then
    say "installing arize-phoenix into $phoenix_venv (a few minutes)"
    if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
      say "installing python3-venv from Debian"
      sudo=""
      [ "$(id -u)" -eq 0 ] || sudo="sudo"
      $sudo apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv
    fi
    python3 -m venv "$phoenix_venv"
    "$phoenix_venv/bin/pip" install --quiet arize-phoenix
  fi
fi
