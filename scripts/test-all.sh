#!/usr/bin/env bash
# The whole test suite, from a fresh clone: starts (or installs) PostgreSQL and Redis, checks
# formatting, lints and dependency direction, then runs every test against SQLite and PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
step() { echo; echo "==> $* (+$(( $(date +%s) - start ))s)"; }

step "services"
bash scripts/services.sh

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "dependency direction"
bash scripts/check-deps.sh

step "interop prerequisites (Chromium, interop/node_modules, interop/authlib/.venv)"
bash scripts/interop-setup.sh

step "tests (SQLite and PostgreSQL)"
export SVCTEST_POSTGRES_URL=${SVCTEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}
log="${CARGO_TARGET_DIR:-target}/test-output.log"
mkdir -p "$(dirname "$log")"
set +e
cargo test --workspace --locked --no-fail-fast 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
summary=$(grep -E '^test result:' "$log" | awk '{p+=$4; f+=$6; i+=$8} END {printf "%d passed, %d failed, %d skipped", p, f, i}')
step "done"
echo "$summary"
exit "$status"
