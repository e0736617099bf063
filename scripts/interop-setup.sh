#!/usr/bin/env bash
# Installs what the interop suite (interop/, crates/runtime/tests/it/interop.rs), the SDKs' tests
# (sdks/go, sdks/js, sdks/elixir) and the API reference gates (crates/runtime/tests/it/openapi.rs)
# need: Debian's Chromium, Go and Elixir, the Node packages of interop/package-lock.json
# (openid-client, jose, playwright-core, @modelcontextprotocol/sdk) and of sdks/js/package-lock.json, a Python venv with
# interop/authlib/requirements.txt (authlib, requests, PyJWT, pyotp) and one with
# interop/api/requirements.txt (schemathesis, openapi-spec-validator) and one with
# interop/scim/requirements.txt (scim2-tester, scim2-client, httpx).
# Idempotent and quick when everything is already in place; safe to run any number of times.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# 1. Chromium (Debian package; Playwright's own browser downloads are not used).
if [ ! -x /usr/bin/chromium ]; then
  echo "interop-setup: installing chromium (Debian package)"
  # Update the package lists only when chromium is not known yet (a fresh image has none).
  if ! apt-cache show chromium >/dev/null 2>&1; then
    as_root apt-get update -qq
  fi
  if ! DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends \
    chromium fonts-liberation >/dev/null; then
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends \
      chromium fonts-liberation >/dev/null
  fi
fi
[ -x /usr/bin/chromium ] || { echo "interop-setup: /usr/bin/chromium is missing after install" >&2; exit 1; }

# 1b. Go (Debian's golang-go), for the Go SDK's tests against the service (sdks/go,
#     crates/runtime/tests/it/go_sdk.rs). The SDK uses the standard library only: nothing is
#     downloaded by `go`.
if ! command -v go >/dev/null; then
  echo "interop-setup: installing golang-go (Debian package)"
  if ! DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends \
    golang-go >/dev/null; then
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends \
      golang-go >/dev/null
  fi
fi
command -v go >/dev/null || { echo "interop-setup: go is missing after install" >&2; exit 1; }

# 1c. Elixir (Debian's elixir, with Erlang/OTP), for the Elixir SDK's tests against the service
#     (sdks/elixir, crates/runtime/tests/it/elixir_sdk.rs). The SDK uses OTP only: nothing is
#     downloaded from Hex.
if ! command -v mix >/dev/null; then
  echo "interop-setup: installing elixir (Debian package)"
  if ! DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends \
    elixir >/dev/null; then
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends \
      elixir >/dev/null
  fi
fi
command -v mix >/dev/null || { echo "interop-setup: mix (elixir) is missing after install" >&2; exit 1; }

# 2. Node packages, exactly as locked. The stamp holds the lock file's hash; `npm ci` runs only
#    when the lock changed or node_modules is gone.
command -v node >/dev/null || { echo "interop-setup: node (20+) is required" >&2; exit 1; }
node_dir="$root/interop"
stamp="$node_dir/node_modules/.interop-lock.sha256"
want=$(sha256sum "$node_dir/package-lock.json" | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "interop-setup: npm ci in interop/"
  (cd "$node_dir" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
fi

# 2b. The JS SDK workspace's devDependencies (sdks/js: TypeScript, @types/node, publint, playwright-core,
#     Vite with the React, Vue, Svelte and Solid plugins and the frameworks themselves, Next.js,
#     SvelteKit with adapter-node),
#     for its tests against the service (crates/runtime/tests/it/js_sdk.rs); same stamp scheme.
js_dir="$root/sdks/js"
js_stamp="$js_dir/node_modules/.interop-lock.sha256"
js_want=$(sha256sum "$js_dir/package-lock.json" | cut -d' ' -f1)
if [ ! -f "$js_stamp" ] || [ "$(cat "$js_stamp")" != "$js_want" ]; then
  echo "interop-setup: npm ci in sdks/js/"
  (cd "$js_dir" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$js_want" >"$js_stamp"
fi

# 3. Python venvs, one per requirements file. Python 3.11 preferred (any 3.10+ works).
python=""
for candidate in python3.11 python3; do
  if command -v "$candidate" >/dev/null 2>&1 &&
    "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
    python=$candidate
    break
  fi
done
[ -n "$python" ] || { echo "interop-setup: python 3.10+ is required" >&2; exit 1; }

# python_venv DIR: DIR/.venv with DIR/requirements.txt installed. The stamp holds the
# requirements' hash; pip runs only when they changed or the venv is gone.
python_venv() {
  local py_dir="$root/$1" venv="$root/$1/.venv" pystamp want
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
    echo "interop-setup: creating $venv with $python"
    rm -rf "$venv"
    "$python" -m venv "$venv"
  fi
  pystamp="$venv/.interop-requirements.sha256"
  want=$(sha256sum "$py_dir/requirements.txt" | cut -d' ' -f1)
  if [ ! -f "$pystamp" ] || [ "$(cat "$pystamp")" != "$want" ]; then
    echo "interop-setup: pip install -r $1/requirements.txt"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$py_dir/requirements.txt"
    echo "$want" >"$pystamp"
  fi
}
# authlib, requests, PyJWT, pyotp: the Python relying party (interop/authlib/rp.py, mfa.py); a
# changed requirements.txt (a new pin) reinstalls into the existing venv.
python_venv interop/authlib
# schemathesis and openapi-spec-validator: the API reference checked against the live server.
python_venv interop/api
# scim2-tester, scim2-client and httpx: SCIM 2.0 compliance of /scim/v2 (interop/scim/check.py).
python_venv interop/scim
venv="$root/interop/authlib/.venv"

echo "interop-setup: ready (chromium $(/usr/bin/chromium --version 2>/dev/null | awk '{print $2}'), node $(node --version), $("$venv/bin/python" --version), schemathesis $("$root/interop/api/.venv/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))'))"
