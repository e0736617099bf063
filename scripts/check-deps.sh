#!/usr/bin/env bash
# Dependency-direction rules of ARCHITECTURE.md ("Rules that keep it easy to change", rule 1),
# checked on the resolved graph of normal (non-dev) dependencies. Exits non-zero on a violation.
#
#   bash scripts/check-deps.sh              check the workspace (cargo tree)
#   bash scripts/check-deps.sh --self-test  prove the rules catch deliberate edges: runs them on
#                                           a fabricated graph, clean and then with one forbidden
#                                           edge at a time, and fails unless each is reported
#
# The graph is injectable so the self-test needs no cargo: with CHECK_DEPS_GRAPH=FILE, each line
# of FILE is `CRATE DEP DEP …`, the crates CRATE reaches (transitively, as `cargo tree` resolves
# them), and only the crates named first on a line exist.
#
# A rule about a crate that does not exist (yet) is skipped, so a planned crate (svc-scim) can be
# listed before it lands and is checked from the day it does.
set -euo pipefail
script=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/.."

# The engines: none may reach another. A new engine goes here and every pair is forbidden at once.
ENGINES=(svc-oauth svc-authn svc-manage svc-webhooks svc-scim)
# The storage backends (the SQL they share, svc-store-sql, has rules of its own below).
BACKENDS=(svc-store-sqlite svc-store-postgres)
# Test support: leaf crates that exist for tests and benchmarks only. Product crates may use them
# as dev-dependencies alone (which this check, on normal dependencies, never sees); only the
# crates in TEST_SUPPORT_USERS may depend on them normally. A new one goes here.
TEST_SUPPORT=(svc-webauthn-soft)
TEST_SUPPORT_USERS=(svc-testkit svc-bench-flows)

graph=${CHECK_DEPS_GRAPH:-}
declare -A reach=() # with a graph file: CRATE -> " DEP DEP … " (spaces around every name)

# Every crate of the workspace, one per line (read once: each `cargo tree` costs a resolve).
members=""
if [ -n "$graph" ]; then
  while read -r crate deps; do
    [ -n "$crate" ] || continue
    members+="$crate"$'\n'
    reach[$crate]=" $deps "
  done <"$graph"
elif [ "${1:-}" != "--self-test" ]; then
  members=$(cargo tree -q --workspace -e normal --depth 0 --prefix none -f '{p}' \
    | awk 'NF {print $1}' | sort -u)
fi

exists() { [[ $'\n'"$members"$'\n' == *$'\n'"$1"$'\n'* ]]; }

# Every crate CRATE reaches through normal dependencies, separated by spaces.
deps_of() {
  if [ -n "$graph" ]; then
    printf '%s' "${reach[$1]}"
    return
  fi
  # A failed `cargo tree` must stop the check, never read as "reaches nothing".
  local tree; tree=$(cargo tree -q -p "$1" -e normal --prefix none -f '{p}') || return 1
  printf ' %s ' "$(awk 'NF {print $1}' <<<"$tree" | sort -u | tr '\n' ' ')"
}

# Every crate that reaches CRATE through normal dependencies (CRATE itself excluded), separated
# by spaces.
dependents_of() {
  local crate=$1 dependents=" " other
  if [ -n "$graph" ]; then
    for other in "${!reach[@]}"; do
      [[ ${reach[$other]} == *" $crate "* ]] && dependents+="$other "
    done
    printf '%s' "$dependents"
    return
  fi
  local tree; tree=$(cargo tree -q --workspace -e normal -i "$crate" --prefix none -f '{p}') || return 1
  printf ' %s ' "$(awk -v self="$crate" 'NF && $1 != self {print $1}' <<<"$tree" | sort -u | tr '\n' ' ')"
}

failures=0
forbid() { # forbid CRATE DEP... : CRATE must not reach any DEP (skipped when CRATE does not exist)
  local crate=$1; shift
  exists "$crate" || return 0
  local reached; reached=$(deps_of "$crate")
  for dep in "$@"; do
    [ "$dep" = "$crate" ] && continue
    if [[ $reached == *" $dep "* ]]; then
      echo "dependency rule broken: $crate reaches $dep" >&2
      if [ -z "$graph" ]; then
        # The path, so the edge to cut is obvious.
        cargo tree -q -p "$crate" -e normal -i "$dep" 2>/dev/null | sed 's/^/    /' >&2 || true
      fi
      failures=$((failures + 1))
    fi
  done
}

# only_used_by CRATE USER... : nothing but the USERs may reach CRATE (skipped when CRATE does not
# exist). An allow-list, so a crate added later is covered without being named.
only_used_by() {
  local crate=$1; shift
  exists "$crate" || return 0
  local dependents; dependents=$(dependents_of "$crate")
  local dependent allowed user
  for dependent in $dependents; do
    allowed=0
    for user in "$@"; do [ "$dependent" = "$user" ] && allowed=1; done
    [ "$allowed" -eq 1 ] && continue
    echo "dependency rule broken: $dependent reaches $crate" >&2
    if [ -z "$graph" ]; then
      cargo tree -q -p "$dependent" -e normal -i "$crate" 2>/dev/null | sed 's/^/    /' >&2 || true
    fi
    failures=$((failures + 1))
  done
}

check_rules() {
  # svc-domain is pure: no IO, no async runtime.
  forbid svc-domain tokio sqlx axum reqwest hyper svc-store svc-config svc-http
  # Storage ports know no database driver and no HTTP.
  forbid svc-store sqlx axum tokio svc-config svc-http
  # Configuration knows no engine, framework or database.
  forbid svc-config sqlx axum tokio svc-store svc-http "${ENGINES[@]}"
  # Only svc-store-* see sqlx; only svc-http sees axum; HTTP never sees config or a backend.
  forbid svc-http sqlx svc-config svc-store-sql "${BACKENDS[@]}"
  # The SQL written once knows neither backend, nor HTTP, configuration or any engine.
  forbid svc-store-sql axum svc-http svc-config "${BACKENDS[@]}" "${ENGINES[@]}"
  # A backend knows no framework, configuration, engine or the other backend.
  forbid svc-store-sqlite axum svc-http svc-config svc-store-postgres "${ENGINES[@]}"
  forbid svc-store-postgres axum svc-http svc-config svc-store-sqlite "${ENGINES[@]}"
  # Cryptography is pure computation: no runtime, framework or storage.
  forbid svc-crypto tokio axum sqlx svc-store svc-config svc-http
  # The KMS daemon stands alone: it shares no code with the service it protects keys for.
  forbid svc-kms svc-store svc-config svc-http svc-oauth svc-crypto axum sqlx
  # Engines know ports, not frameworks, backends, configuration or the KMS wire protocol, and
  # never each other: they meet through domain types, the store and ports the runtime wires.
  local engine
  for engine in "${ENGINES[@]}"; do
    forbid "$engine" axum sqlx svc-config svc-store-sql "${BACKENDS[@]}" svc-kms svc-http \
      "${ENGINES[@]}"
  done
  # The backend SDK is what resource servers embed: it knows no server crate at all.
  forbid svc-sdk svc-domain svc-store svc-config svc-http svc-crypto svc-kms sqlx axum "${ENGINES[@]}"
  # Test support never ships: only the test harness and the benchmark driver depend on it
  # normally, and it is a leaf that knows no other crate of the workspace.
  local support
  for support in "${TEST_SUPPORT[@]}"; do
    only_used_by "$support" "${TEST_SUPPORT_USERS[@]}"
    # shellcheck disable=SC2086 # one workspace crate per word
    forbid "$support" $members
  done
}

# A graph shaped like the workspace, every rule holding: crate, then everything it reaches.
fabricated_graph() {
  cat <<'EOF'
svc-domain serde time url
svc-crypto svc-domain argon2 aws-lc-rs
svc-store svc-domain async-trait
svc-config svc-domain serde toml
svc-store-sql svc-store svc-domain sqlx
svc-store-sqlite svc-store-sql svc-store svc-domain sqlx tokio
svc-store-postgres svc-store-sql svc-store svc-domain sqlx tokio
svc-oauth svc-store svc-crypto svc-domain tokio
svc-authn svc-store svc-domain reqwest tokio
svc-manage svc-store svc-domain async-trait
svc-webhooks svc-store svc-crypto svc-domain reqwest tokio
svc-kms aws-lc-rs tokio
svc-http svc-oauth svc-authn svc-manage svc-webhooks svc-store svc-crypto svc-domain axum tokio
svc-sdk aws-lc-rs serde
svc-runtime svc-http svc-config svc-oauth svc-authn svc-manage svc-webhooks svc-store-sqlite svc-store-postgres svc-store-sql svc-store svc-crypto svc-kms svc-domain axum sqlx tokio
svc-webauthn-soft p256 sha2 serde_json base64
svc-testkit svc-webauthn-soft svc-runtime svc-http svc-config svc-oauth svc-authn svc-manage svc-webhooks svc-store-sqlite svc-store-postgres svc-store-sql svc-store svc-crypto svc-kms svc-domain p256 axum sqlx tokio
svc-bench-flows svc-webauthn-soft svc-config svc-domain p256 reqwest tokio
EOF
}

self_test() {
  selftest_dir=$(mktemp -d)
  trap 'rm -rf "$selftest_dir"' EXIT
  local dir=$selftest_dir
  local clean=$dir/clean.graph out=$dir/out status caught=0
  fabricated_graph >"$clean"

  # The clean graph passes: a rule that fires on it would make every failure below meaningless.
  if ! CHECK_DEPS_GRAPH=$clean bash "$script" >"$out" 2>&1; then
    echo "self-test FAILED: the clean fabricated graph was refused:" >&2
    cat "$out" >&2
    return 1
  fi

  # expect_caught CRATE DEP: the clean graph plus CRATE → DEP must fail, naming exactly that edge.
  expect_caught() {
    local crate=$1 dep=$2 bad=$dir/bad.graph
    if grep -q "^$crate " "$clean"; then
      sed "s/^$crate /$crate $dep /" "$clean" >"$bad"
    else
      { cat "$clean"; echo "$crate svc-domain $dep"; } >"$bad"
    fi
    set +e
    CHECK_DEPS_GRAPH=$bad bash "$script" >"$out" 2>&1
    status=$?
    set -e
    if [ "$status" -eq 0 ] || ! grep -qx "dependency rule broken: $crate reaches $dep" "$out"; then
      echo "self-test FAILED: $crate -> $dep was not reported (exit $status):" >&2
      cat "$out" >&2
      return 1
    fi
    caught=$((caught + 1))
  }

  # The edge this rule was written against (svc-manage once used svc-authn's hasher), in full.
  expect_caught svc-manage svc-authn
  echo "deliberate edge svc-manage -> svc-authn, exit $status:"
  sed 's/^/    /' "$out"

  # Every ordered pair of engines, svc-scim included (it joins the graph as it reaches another).
  local a b
  for a in "${ENGINES[@]}"; do
    for b in "${ENGINES[@]}"; do
      [ "$a" = "$b" ] || expect_caught "$a" "$b"
    done
  done
  # The SQL written once and the backends stay below the engines and beside each other.
  for b in "${ENGINES[@]}" "${BACKENDS[@]}" axum svc-http svc-config; do
    expect_caught svc-store-sql "$b"
  done
  for a in "${BACKENDS[@]}"; do
    for b in "${ENGINES[@]}"; do expect_caught "$a" "$b"; done
  done
  expect_caught svc-crypto tokio
  # Test support: no product crate may reach it, a crate not named anywhere included, and it
  # reaches no workspace crate (svc-testkit and svc-bench-flows reach it in the clean graph).
  for a in svc-domain svc-runtime svc-http svc-authn svc-sdk svc-scim; do
    for b in "${TEST_SUPPORT[@]}"; do expect_caught "$a" "$b"; done
  done
  for b in svc-domain svc-testkit svc-runtime; do expect_caught svc-webauthn-soft "$b"; done

  # The clean graph passed without svc-scim: a rule about a crate that does not exist is
  # skipped, not an error. Make sure that is what was tested.
  if grep -q '^svc-scim ' "$clean"; then
    echo "self-test FAILED: the fabricated graph should not hold svc-scim" >&2
    return 1
  fi
  echo "self-test passed: $caught deliberate edges reported, the clean graph accepted"
}

if [ "${1:-}" = "--self-test" ]; then
  self_test
  exit
fi

check_rules
if [ "$failures" -ne 0 ]; then
  echo "$failures dependency rule(s) broken" >&2
  exit 1
fi
echo "dependency rules hold"
