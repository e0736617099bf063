#!/usr/bin/env bash
# bench/run.sh [--quick] — benchmark svc against node-oidc-provider on this machine.
# See bench/README.md. Loopback only, every load run bounded in time, everything cleaned up on exit.
set -euo pipefail
shopt -s inherit_errexit

usage() {
  cat <<'EOF'
usage: bash bench/run.sh [--quick]

  --quick   1 round, 4 s per load run (about 8 minutes in total with a warm build)
  (default) 2 rounds, 15 s per load run (about 40 minutes)

Environment overrides (optional):
  BENCH_DURATION=SECONDS   seconds per load run          BENCH_ROUNDS=N     interleaved rounds
  BENCH_BACKENDS="sqlite postgres"                       BENCH_CONCURRENCY="16 64"
  BENCH_SCENARIOS="token introspect jwks discovery api_key_read jwt_read refresh authcode authcode_par device_poll token_flows token_exchange token_dpop signin signin_totp signin_passkey"
  BENCH_TOTP_USERS=N       users with a TOTP factor for signin_totp (default: sized to the runs)
  BENCH_PG_URL=postgres://postgres@127.0.0.1:5432/postgres
  BENCH_SVC_LOG=warn       RUST_LOG for svc (info = per-request access log on, as shipped)
  BENCH_ID_TOKEN_ALG=RS256 ID-token algorithm of the code-flow client on both servers (RS256|ES256)
  BENCH_SKIP_BUILD=1       use the binaries already built (no cargo build)
  BENCH_PROFILE=release    cargo profile of the binaries: release (default; the only one whose
                           figures mean anything) or dev (the CI smoke: reuses the test build)
  BENCH_OUT=FILE           where the results table goes (default: bench/RESULTS.md)
  CARGO_TARGET_DIR=DIR     where cargo builds (and where the binaries are taken from)
EOF
}

MODE=full
DURATION=15
ROUNDS=2
WARMUP=3
for arg in "$@"; do
  case "$arg" in
    --quick) MODE=quick; DURATION=4; ROUNDS=1; WARMUP=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown argument: $arg" >&2; usage >&2; exit 2 ;;
  esac
done
DURATION=${BENCH_DURATION:-$DURATION}
ROUNDS=${BENCH_ROUNDS:-$ROUNDS}
BACKENDS=${BENCH_BACKENDS:-"sqlite postgres"}
CONCURRENCY=${BENCH_CONCURRENCY:-"16 64"}
SCENARIOS=${BENCH_SCENARIOS:-"token introspect jwks discovery api_key_read jwt_read refresh authcode authcode_par device_poll token_flows token_exchange token_dpop signin signin_totp signin_passkey"}
PG_ADMIN_URL=${BENCH_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres}
SVC_LOG=${BENCH_SVC_LOG:-warn}
ID_TOKEN_ALG=${BENCH_ID_TOKEN_ALG:-RS256}
case "$ID_TOKEN_ALG" in RS256|ES256) ;; *) echo "run.sh: BENCH_ID_TOKEN_ALG must be RS256 or ES256" >&2; exit 2 ;; esac
SKIP_BUILD=${BENCH_SKIP_BUILD:-0}
PROFILE=${BENCH_PROFILE:-release}
case "$PROFILE" in
  release) PROFILE_DIR=release; PROFILE_FLAG=--release ;;
  dev) PROFILE_DIR=debug; PROFILE_FLAG="" ;;
  *) echo "run.sh: BENCH_PROFILE must be release or dev" >&2; exit 2 ;;
esac

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)
# Cargo's target directory: CARGO_TARGET_DIR when set (relative to the workspace root), else target/.
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
BIN="$TARGET_DIR/$PROFILE_DIR/svc-runtime"
FLOWS="$TARGET_DIR/$PROFILE_DIR/svc-bench-flows"
CMDLINE="bash bench/run.sh${*:+ $*}"
for v in BENCH_DURATION BENCH_ROUNDS BENCH_BACKENDS BENCH_CONCURRENCY BENCH_SCENARIOS BENCH_TOTP_USERS BENCH_PG_URL BENCH_SVC_LOG BENCH_ID_TOKEN_ALG BENCH_SKIP_BUILD BENCH_PROFILE; do
  if [ -n "${!v:-}" ]; then CMDLINE="$v='${!v}' $CMDLINE"; fi
done
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RAW="$BENCH_DIR/results-raw/$STAMP"
OUT=${BENCH_OUT:-$BENCH_DIR/RESULTS.md}
mkdir -p "$(dirname "$OUT")"
WORK=$(mktemp -d /tmp/svc-bench.XXXXXX)
CLK_TCK=$(getconf CLK_TCK)
T_START=$(date +%s)

OURS_PID=""
PEER_PID=""
FLOW_PID=""
PG_DB=""

log() { printf '[bench %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Scenarios driven by bench/flows (svc-bench-flows) instead of wrk; the sign-ins (password,
# password + TOTP, passkey), the pushed-request code flow (authcode_par, RFC 9126), the device
# grant's polls (device_poll, RFC 8628), client_credentials with a fresh DPoP proof per request
# (token_dpop, RFC 9449; the peer is not configured for DPoP) and the token exchange of a
# client_credentials token (token_exchange, RFC 8693; nor for that) with their baseline from the
# same driver (token_flows) run on svc only.
is_flow() { case "$1" in refresh|authcode|authcode_par|device_poll|token_flows|token_exchange|token_dpop|signin|signin_totp|signin_passkey) return 0 ;; *) return 1 ;; esac; }
is_signin() { case "$1" in signin|signin_totp|signin_passkey) return 0 ;; *) return 1 ;; esac; }
# client_credentials as the tenant's management application, from the flows driver.
is_client_credentials_flow() { case "$1" in token_flows|token_dpop) return 0 ;; *) return 1 ;; esac; }
# Flows of machines: no person, no ID token.
is_machine_flow() { is_client_credentials_flow "$1" || [ "$1" = token_exchange ]; }
# The same management API read (wrk) with an API key and with a JWT: svc only (the peer has no
# management API).
is_management_read() { case "$1" in api_key_read|jwt_read) return 0 ;; *) return 1 ;; esac; }
has_scenario() { [[ " $SCENARIOS " == *" $1 "* ]]; }
peer_runs() { ! is_signin "$1" && ! is_machine_flow "$1" && ! is_management_read "$1" && [ "$1" != authcode_par ] && [ "$1" != device_poll ]; }
# Flows that need the code-flow application and the users (the machine flows use the tenant's
# management application, which exists anyway, or the exchange application).
any_flow() { local s; for s in $SCENARIOS; do is_flow "$s" && ! is_machine_flow "$s" && return 0; done; return 1; }
# Runs with non-2xx answers or socket errors: reported in RESULTS.md, then the harness fails.
FAILED_RUNS=0

stop_pid() {
  local pid=$1
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

drop_pg_db() {
  if [ -n "$PG_DB" ]; then
    psql "$PG_ADMIN_URL" -v ON_ERROR_STOP=1 -qc "DROP DATABASE IF EXISTS $PG_DB WITH (FORCE)" >/dev/null 2>&1 \
      || log "warning: could not drop database $PG_DB"
    PG_DB=""
  fi
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  stop_pid "$FLOW_PID"; FLOW_PID=""
  stop_pid "$OURS_PID"; OURS_PID=""
  stop_pid "$PEER_PID"; PEER_PID=""
  drop_pg_db
  rm -rf "$WORK"
  if [ "$rc" -ne 0 ]; then log "failed (exit $rc); raw output kept in $RAW"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
# argon2_raw BACKEND: raw Argon2id rate of svc's default parameters (the physical limit of password
# sign-in), while both servers are idle: on every CPU, and on argon2_max_concurrent threads when
# that differs.
argon2_raw() {
  local backend=$1 defaults="$RAW/argon2-defaults.txt" t line
  if [ ! -e "$ARGON" ]; then
    "$FLOWS" argon2-defaults >"$defaults" 2>&1 || die "svc-bench-flows argon2-defaults failed: $(cat "$defaults")"
    sed 's/^/argon2_/' "$defaults" >>"$META"
    printf 'backend\tthreads\trequests\tduration_us\tp50_us\tp99_us\n' >"$ARGON"
  fi
  local max_concurrent; max_concurrent=$(awk -F= '$1 == "max_concurrent" {print $2}' "$defaults")
  local threads_list; threads_list=$(nproc)
  if [ "$max_concurrent" != "$(nproc)" ]; then threads_list="$threads_list $max_concurrent"; fi
  for t in $threads_list; do
    local out="$RAW/$backend-argon2-t$t.txt"
    timeout $((DURATION + 120)) "$FLOWS" argon2 --threads "$t" --duration "$DURATION" >"$out" 2>&1 \
      || die "argon2 rate failed: $(tail -3 "$out")"
    line=$(grep -m1 '^BENCH ' "$out") || die "no summary from the argon2 run"
    local requests duration_us p50_us p99_us max_us non2xx sockerr
    eval "$(sed 's/^BENCH //' <<<"$line")"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$backend" "$t" "$requests" "$duration_us" "$p50_us" "$p99_us" >>"$ARGON"
    log "$backend: argon2id raw rate (svc defaults) on $t thread(s): $(( requests * 1000000 / (duration_us > 0 ? duration_us : 1) )) hashes/s ($requests in $((duration_us / 1000)) ms), p50 $((p50_us / 1000)) ms"
  done
}

# p256_raw BACKEND: the wall time of one ES256 verification (svc's floor per DPoP proof) and of
# one ES256 signature (the driver's), one thread, both servers idle; report.py puts the DPoP
# ratio's ceiling from them.
p256_raw() {
  local backend=$1 out="$RAW/$1-p256.txt"
  timeout 120 "$FLOWS" p256-cost --duration 3 >"$out" 2>&1 || die "p256-cost failed: $(tail -3 "$out")"
  sed "s/^/${backend}_p256_/" "$out" >>"$META"
  log "$backend: one ES256 proof: $(tr '\n' ' ' <"$out")"
}

# pg_ticks FILE: "pid ticks" of every PostgreSQL backend connected to the bench database (empty for SQLite).
pg_ticks() {
  : >"$1"
  [ -n "$PG_DB" ] || return 0
  local pid
  for pid in $(psql "$PG_ADMIN_URL" -Atc "SELECT pid FROM pg_stat_activity WHERE datname = '$PG_DB'" 2>/dev/null); do
    [ -r "/proc/$pid/stat" ] && echo "$pid $(cpu_ticks "$pid" 2>/dev/null || echo 0)" >>"$1"
  done
  return 0
}
# pg_delta BEFORE AFTER: CPU ticks the bench database's backends used in between (backends that
# disappeared during the run are not counted; new ones count from 0).
pg_delta() { awk 'NR == FNR {b[$1] = $2; next} {d += $2 - (($1 in b) ? b[$1] : 0)} END {print d + 0}' "$1" "$2"; }
status_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }

# wait_ready PID URL [HOST]: poll until 200, at most 60 s.
wait_ready() {
  local pid=$1 url=$2 host=${3:-}
  local deadline=$(( $(now_ms) + 60000 ))
  local args=(-s -o /dev/null -w '%{http_code}' -m 1)
  [ -n "$host" ] && args+=(-H "Host: $host")
  while :; do
    kill -0 "$pid" 2>/dev/null || return 1
    [ "$(curl "${args[@]}" "$url" 2>/dev/null || true)" = "200" ] && return 0
    [ "$(now_ms)" -lt "$deadline" ] || return 1
    sleep 0.01
  done
}

# ---------------------------------------------------------------------------------------------
# Tools and build
# ---------------------------------------------------------------------------------------------
mkdir -p "$RAW"
log "mode=$MODE duration=${DURATION}s rounds=$ROUNDS backends='$BACKENDS' concurrency='$CONCURRENCY' scenarios='$SCENARIOS'"
log "raw output: $RAW"

if ! command -v wrk >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing wrk (Debian package)"
    apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y wrk >/dev/null 2>&1; } \
      || die "could not install wrk; install it with: apt-get install -y wrk"
  else
    die "wrk is missing; install it with: apt-get install -y wrk"
  fi
fi
for tool in curl jq node npm python3 getconf; do command -v "$tool" >/dev/null 2>&1 || die "$tool is missing"; done
if [[ " $BACKENDS " == *" postgres "* ]]; then command -v psql >/dev/null 2>&1 || die "psql is missing (needed for the postgres backend)"; fi

if [ "$SKIP_BUILD" = 1 ]; then
  log "BENCH_SKIP_BUILD=1: using the binaries in $TARGET_DIR/$PROFILE_DIR as they are"
else
  log "cargo build $PROFILE_FLAG -p svc-runtime -p svc-bench-flows (profile $PROFILE, target: $TARGET_DIR)"
  # shellcheck disable=SC2086 # PROFILE_FLAG is empty for the dev profile
  (cd "$ROOT" && cargo build $PROFILE_FLAG -p svc-runtime -p svc-bench-flows) >"$RAW/cargo-build.log" 2>&1 \
    || { tail -20 "$RAW/cargo-build.log" >&2; die "$PROFILE build failed (see $RAW/cargo-build.log)"; }
fi
if [ "$PROFILE" != release ]; then
  log "profile $PROFILE: unoptimised svc binaries; the figures check that every scenario runs, they say nothing of speed"
fi
[ -x "$BIN" ] || die "missing $BIN after build"
[ -x "$FLOWS" ] || die "missing $FLOWS after build"

if [ ! -d "$BENCH_DIR/peer/node_modules/oidc-provider" ]; then
  log "npm ci (bench/peer)"
  (cd "$BENCH_DIR/peer" && npm ci --no-audit --no-fund) >"$RAW/npm-ci.log" 2>&1 \
    || die "npm ci failed in bench/peer (see $RAW/npm-ci.log)"
fi

# ---------------------------------------------------------------------------------------------
# Metadata
# ---------------------------------------------------------------------------------------------
META="$RAW/meta.env"
{
  echo "cmdline=$CMDLINE"
  echo "mode=$MODE"
  echo "profile=$PROFILE"
  echo "duration=$DURATION"
  echo "rounds=$ROUNDS"
  echo "warmup=$WARMUP"
  echo "svc_log=$SVC_LOG"
  echo "date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no -- crates bench/flows Cargo.toml Cargo.lock 2>/dev/null)" ]; then
    echo "dirty=yes"; else echo "dirty=no"; fi
  echo "nproc=$(nproc)"
  echo "cpu=$(awk -F': ' '/^model name/{print $2; exit}' /proc/cpuinfo)"
  echo "mem=$(awk '/^MemTotal:/{printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  echo "kernel=$(uname -r)"
  echo "rustc=$(rustc --version 2>/dev/null || echo unknown)"
  echo "node=$(node --version)"
  echo "oidc_provider=$(node -p "require('$BENCH_DIR/peer/node_modules/oidc-provider/package.json').version")"
  echo "wrk=$(wrk -v 2>&1 | head -1 | awk '{print $2}')"
  echo "clk_tck=$CLK_TCK"
  echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$META"

ARGON="$RAW/argon2.tsv"
RUNS="$RAW/runs.tsv"
printf 'backend\tserver\tscenario\tconc\tround\trequests\tduration_us\tp50_us\tp99_us\tmax_us\tnon2xx\tsockerr\tcpu_ticks\tdb_ticks\trss_kb\thwm_kb\n' >"$RUNS"

# ---------------------------------------------------------------------------------------------
# Servers
# ---------------------------------------------------------------------------------------------
OURS_PORT=""; OURS_HOST=""; OURS_AUTH=""; OURS_CLIENT_ID=""; OURS_CLIENT_SECRET=""
# api_key_read: an API key of the bench tenant (applications:read); token_exchange: an application
# with client_credentials and the exchange grant (both created by provision_machine).
OURS_API_KEY=""; OURS_EXCHANGE_CLIENT_ID=""; OURS_EXCHANGE_CLIENT_SECRET=""
PEER_PORT=""
PEER_CLIENT_ID=bench-client
PEER_CLIENT_SECRET="bench-secret-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
PEER_AUTH="Basic $(printf '%s:%s' "$PEER_CLIENT_ID" "$PEER_CLIENT_SECRET" | base64 -w0)"
PEER_RESOURCE_JWT=https://api.bench.example
PEER_RESOURCE_OPAQUE=urn:bench:opaque
# Code-flow clients (authorization_code + refresh_token, client_secret_basic, PKCE S256) on both sides,
# with a redirect URI that is never fetched, and the users the flows sign in as (svc: one per worker
# of the highest concurrency; the peer has one fixed account, see bench/peer/server.js).
REDIRECT_URI=http://127.0.0.1/cb
PEER_CODE_CLIENT_ID=bench-code
PEER_CODE_CLIENT_SECRET="bench-code-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
OURS_CODE_CLIENT_ID=""; OURS_CODE_CLIENT_SECRET=""
BENCH_USERS=1
for c in $CONCURRENCY; do if [ "$c" -gt "$BENCH_USERS" ]; then BENCH_USERS=$c; fi; done
echo "bench_users=$BENCH_USERS" >>"$META"
echo "id_token_alg=$ID_TOKEN_ALG" >>"$META"
BENCH_USER_PASSWORD="bench-pw-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
USER_EMAIL='bench-user-{i}@bench.example'
# signin_totp signs in as other users, each with a TOTP factor (the password-only flows keep
# theirs). svc takes one code per factor per 30 s time step, so a user gives two sign-ins at
# first (steps now and now+1), then one per 30 s (see README). Enough users that the driver never
# waits for a step during the back-to-back runs of one round: codes needed = the sum over the
# concurrencies of (sign-ins/s × DURATION + the iterations in flight at the end), at up to 8
# sign-ins/s per CPU (about 6 measured: Argon2id bounds them); each user gives 2 + one per 30 s of
# those runs. At least one user per worker, at most 512 (BENCH_TOTP_USERS overrides).
# Quick mode runs signin_totp at the lowest concurrency only: every user costs two Argon2id
# hashes (creation, enrolment) and the smoke run keeps its time budget.
TOTP_EMAIL='bench-totp-{i}@bench.example'
TOTP_CONCURRENCY=$CONCURRENCY
if [ "$MODE" = quick ]; then
  TOTP_CONCURRENCY=$(tr ' ' '\n' <<<"$CONCURRENCY" | grep . | sort -n | head -1)
fi
if [ -n "${BENCH_TOTP_USERS:-}" ]; then
  TOTP_USERS=$BENCH_TOTP_USERS
else
  totp_need=0; totp_span=0; TOTP_USERS=1
  for c in $TOTP_CONCURRENCY; do
    totp_need=$((totp_need + 8 * $(nproc) * DURATION + c)); totp_span=$((totp_span + DURATION))
    if [ "$c" -gt "$TOTP_USERS" ]; then TOTP_USERS=$c; fi
  done
  totp_per_user=$((2 + totp_span / 30))
  totp_fit=$(( (totp_need + totp_per_user - 1) / totp_per_user ))
  if [ "$totp_fit" -gt 512 ]; then totp_fit=512; fi
  if [ "$totp_fit" -gt "$TOTP_USERS" ]; then TOTP_USERS=$totp_fit; fi
fi
# signin_passkey signs in as users of its own too, one per worker of the highest concurrency;
# each run's setup registers the passkeys of the users its workers sign in as (password sign-in
# on /auth/account/passkeys, removing what an earlier run left), not measured.
PASSKEY_EMAIL='bench-passkey-{i}@bench.example'
# concurrencies SCENARIO: the concurrencies SCENARIO runs at.
concurrencies() { if [ "$1" = signin_totp ]; then echo "$TOTP_CONCURRENCY"; else echo "$CONCURRENCY"; fi; }
if has_scenario signin_totp; then echo "totp_users=$TOTP_USERS" >>"$META"; echo "totp_concurrency=$TOTP_CONCURRENCY" >>"$META"; fi
if has_scenario signin_passkey; then echo "passkey_users=$BENCH_USERS" >>"$META"; fi
TOTP_STATE=""

# svc_env BACKEND_DIR DB_URL: environment for every svc-runtime invocation of this backend.
svc_env() {
  SVC_ENV=(
    "DATABASE_URL=$2"
    "SVC_SERVER__PORT=$OURS_PORT"
    "SVC_SERVER__BASE_DOMAIN=localhost"
    "RUST_LOG=$SVC_LOG"
    # Password sign-in is measured from one client IP: raise the per-IP limit (production
    # default 20 per 300 s) so the bench is not throttled. Argon2 keeps svc's defaults.
    "SVC_AUTH__PASSWORD_VERIFY_IP_MAX_ATTEMPTS=1000"
    "SVC_AUTH__PASSWORD_VERIFY_IP_WINDOW_SECS=1"
    # Second factors on (signin_totp enrols its own users; nobody else has a factor, so the
    # other scenarios sign in with the password alone, as before).
    "SVC_TWO_FACTOR__ENABLED=true"
    # Passkeys on (signin_passkey registers them for its own users only; the sign-in page then
    # also offers them, which the password scenarios do not use).
    "SVC_PASSKEY__ENABLED=true"
  )
}

start_ours() {
  local backend=$1 db_url=$2 dir="$WORK/ours-$backend"
  mkdir -p "$dir"
  OURS_PORT=$(free_port)
  OURS_HOST="bench.localhost:$OURS_PORT"
  svc_env "$dir" "$db_url"
  log "svc ($backend): --migrate-only"
  (cd "$dir" && env "${SVC_ENV[@]}" "$BIN" --migrate-only) >"$RAW/ours-$backend-migrate.log" 2>&1 \
    || die "svc --migrate-only failed (see $RAW/ours-$backend-migrate.log)"
  local t0; t0=$(now_ms)
  (cd "$dir" && exec env "${SVC_ENV[@]}" "$BIN" --log-format json) >"$RAW/ours-$backend.log" 2>&1 &
  OURS_PID=$!
  wait_ready "$OURS_PID" "http://127.0.0.1:$OURS_PORT/health/ready" \
    || { tail -20 "$RAW/ours-$backend.log" >&2; die "svc ($backend) did not become ready"; }
  local t1; t1=$(now_ms)
  echo "${backend}_ours_ready_ms=$((t1 - t0))" >>"$META"
  sleep 1
  echo "${backend}_ours_idle_rss_kb=$(status_kb "$OURS_PID" VmRSS)" >>"$META"
  log "svc ($backend): pid $OURS_PID ready in $((t1 - t0)) ms on 127.0.0.1:$OURS_PORT"

  local op
  op=$(cd "$dir" && env "${SVC_ENV[@]}" "$BIN" operator create-token --name bench 2>>"$RAW/ours-$backend-operator.log" \
        | grep -m1 '^svcop_' || true)
  [ -n "$op" ] || die "operator create-token printed no token (see $RAW/ours-$backend-operator.log)"
  local resp
  resp=$(curl -s -m 10 -X POST "http://127.0.0.1:$OURS_PORT/api/v1/control-plane/tenants" \
    -H "authorization: Bearer $op" -H 'content-type: application/json' \
    -d '{"slug":"bench","display_name":"Bench"}')
  OURS_CLIENT_ID=$(jq -r '.management_application.client_id // empty' <<<"$resp")
  OURS_CLIENT_SECRET=$(jq -r '.management_application.client_secret // empty' <<<"$resp")
  [ -n "$OURS_CLIENT_ID" ] && [ -n "$OURS_CLIENT_SECRET" ] \
    || die "tenant creation failed: $(jq -c 'del(.management_application.client_secret)' <<<"$resp" 2>/dev/null || echo "$resp")"
  OURS_AUTH="Basic $(printf '%s:%s' "$OURS_CLIENT_ID" "$OURS_CLIENT_SECRET" | base64 -w0)"
  log "svc ($backend): tenant bench created, client $OURS_CLIENT_ID"
  if has_scenario api_key_read || has_scenario token_exchange; then provision_machine "$backend"; fi
  if any_flow; then provision_ours "$backend"; fi
}

# provision_machine BACKEND: for api_key_read, an API key (applications:read, the scope of the
# jwt_read token, so both reads pass the same checks); for token_exchange, a confidential
# application with client_credentials and the exchange grant, allowed applications:read (the
# scope of token_flows, so both token requests ask for the same). Through the management API with
# a client_credentials token of the management application.
provision_machine() {
  local backend=$1 base="http://127.0.0.1:$OURS_PORT" token resp
  token=$(curl -s -m 10 "$base/oauth/token" -H "Host: $OURS_HOST" -H "Authorization: $OURS_AUTH" \
            -d grant_type=client_credentials --data-urlencode 'scope=applications:read applications:write' \
          | jq -r '.access_token // empty')
  [ -n "$token" ] || die "no management token with applications:read applications:write"
  if has_scenario api_key_read; then
    resp=$(curl -s -m 10 "$base/api/v1/api-keys" -H "Host: $OURS_HOST" -H "authorization: Bearer $token" \
      -H 'content-type: application/json' -d '{"name": "bench", "scopes": ["applications:read"]}')
    OURS_API_KEY=$(jq -r '.key // empty' <<<"$resp")
    [[ "$OURS_API_KEY" == svck_* ]] || die "API key creation failed: $(jq -c 'del(.key)' <<<"$resp" 2>/dev/null || echo "$resp")"
    log "svc ($backend): API key $(jq -r .id <<<"$resp") (applications:read)"
  fi
  if has_scenario token_exchange; then
    resp=$(curl -s -m 10 "$base/api/v1/applications" -H "Host: $OURS_HOST" -H "authorization: Bearer $token" \
      -H 'content-type: application/json' -d '{"name": "bench token exchange",
        "grant_types": ["urn:ietf:params:oauth:grant-type:token-exchange", "client_credentials"],
        "token_endpoint_auth_method": "client_secret_basic", "redirect_uris": [],
        "allowed_scopes": ["applications:read"]}')
    OURS_EXCHANGE_CLIENT_ID=$(jq -r '.client_id // empty' <<<"$resp")
    OURS_EXCHANGE_CLIENT_SECRET=$(jq -r '.client_secret // empty' <<<"$resp")
    [ -n "$OURS_EXCHANGE_CLIENT_ID" ] && [ -n "$OURS_EXCHANGE_CLIENT_SECRET" ] \
      || die "token-exchange application creation failed: $(jq -c 'del(.client_secret)' <<<"$resp" 2>/dev/null || echo "$resp")"
    log "svc ($backend): token-exchange client $OURS_EXCHANGE_CLIENT_ID"
  fi
}

# create_users BASE TOKEN EMAIL COUNT: COUNT people with the bench password (EMAIL with {i} = 1..COUNT).
create_users() {
  local base=$1 token=$2 email=$3 count=$4
  # Each creation hashes a password (Argon2id, at most argon2_max_concurrent at once): 4 in flight.
  local i pids=() codes="$WORK/users.codes"
  : >"$codes"
  for i in $(seq 1 "$count"); do
    curl -s -m 60 -o /dev/null -w '%{http_code}\n' "$base/api/v1/tenant-users" -H "Host: $OURS_HOST" \
      -H "authorization: Bearer $token" -H 'content-type: application/json' \
      -d "$(jq -nc --arg e "${email//\{i\}/$i}" --arg p "$BENCH_USER_PASSWORD" '{email: $e, password: $p, name: "Bench User"}')" \
      >>"$codes" &
    pids+=($!)
    if [ "${#pids[@]}" -ge 4 ]; then wait "${pids[@]}"; pids=(); fi
  done
  [ "${#pids[@]}" -eq 0 ] || wait "${pids[@]}"
  local created; created=$(grep -c '^201$' "$codes" || true)
  [ "$created" = "$count" ] || die "created $created of $count users $email (HTTP codes: $(sort "$codes" | uniq -c | tr '\n' ' '))"
}

# provision_ours BACKEND: the code-flow application (first party: no consent), BENCH_USERS
# people with a password and, for signin_totp, TOTP_USERS more (enrolled by the flows driver),
# for signin_passkey BENCH_USERS more (their passkeys registered by the flows driver), through
# the management API with a client_credentials token.
provision_ours() {
  local backend=$1 base="http://127.0.0.1:$OURS_PORT" token resp
  token=$(curl -s -m 10 "$base/oauth/token" -H "Host: $OURS_HOST" -H "Authorization: $OURS_AUTH" \
            -d grant_type=client_credentials --data-urlencode 'scope=applications:write users:write' \
          | jq -r '.access_token // empty')
  [ -n "$token" ] || die "no management token with applications:write users:write"
  resp=$(curl -s -m 10 "$base/api/v1/applications" -H "Host: $OURS_HOST" -H "authorization: Bearer $token" \
    -H 'content-type: application/json' -d "$(jq -nc --arg r "$REDIRECT_URI" --arg alg "$ID_TOKEN_ALG" '{name: "bench code flow",
      grant_types: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
      token_endpoint_auth_method: "client_secret_basic",
      redirect_uris: [$r], allowed_scopes: ["openid", "profile", "email", "offline_access"], first_party: true,
      id_token_signed_response_alg: $alg}')")
  OURS_CODE_CLIENT_ID=$(jq -r '.client_id // empty' <<<"$resp")
  OURS_CODE_CLIENT_SECRET=$(jq -r '.client_secret // empty' <<<"$resp")
  [ -n "$OURS_CODE_CLIENT_ID" ] && [ -n "$OURS_CODE_CLIENT_SECRET" ] \
    || die "code-flow application creation failed: $(jq -c 'del(.client_secret)' <<<"$resp" 2>/dev/null || echo "$resp")"
  create_users "$base" "$token" "$USER_EMAIL" "$BENCH_USERS"
  log "svc ($backend): code-flow client $OURS_CODE_CLIENT_ID (first party), $BENCH_USERS users"
  if has_scenario signin_totp; then
    local t0; t0=$(date +%s)
    create_users "$base" "$token" "$TOTP_EMAIL" "$TOTP_USERS"
    log "svc ($backend): $TOTP_USERS users for signin_totp in $(( $(date +%s) - t0 )) s (TOTP enrolled by the driver's first run)"
  fi
  if has_scenario signin_passkey; then
    local t0; t0=$(date +%s)
    create_users "$base" "$token" "$PASSKEY_EMAIL" "$BENCH_USERS"
    log "svc ($backend): $BENCH_USERS users for signin_passkey in $(( $(date +%s) - t0 )) s (passkeys registered by the driver's setup)"
  fi
}

# peer_diagnostics PID PORT: what the machine was doing when the peer did not answer (its state and
# CPU time, who listens on its port, the busiest processes), for the raw log of a failed start.
peer_diagnostics() {
  local pid=$1 port=$2
  {
    echo "--- peer pid $pid: $(ps -o stat=,pcpu=,etime=,time= -p "$pid" 2>/dev/null || echo gone)"
    echo "--- listening on $port:"; ss -ltnp "sport = :$port" 2>/dev/null || true
    echo "--- busiest processes:"; ps -eo pid,stat,pcpu,etime,comm --sort=-pcpu 2>/dev/null | head -8
    echo "--- load: $(cat /proc/loadavg)"
  } >&2
}

start_peer() {
  local backend=$1 attempt
  # One retry on a new port: a CI run once saw the peer alive but silent for 60 s after its
  # start (stop 25); the diagnostics above say why if it happens twice.
  for attempt in 1 2; do
    PEER_PORT=$(free_port)
    local t0; t0=$(now_ms)
    (cd "$BENCH_DIR/peer" && exec env NODE_ENV=production PEER_PORT="$PEER_PORT" PEER_CLIENT_ID="$PEER_CLIENT_ID" \
        PEER_CLIENT_SECRET="$PEER_CLIENT_SECRET" PEER_RESOURCE_JWT="$PEER_RESOURCE_JWT" \
        PEER_RESOURCE_OPAQUE="$PEER_RESOURCE_OPAQUE" PEER_CODE_CLIENT_ID="$PEER_CODE_CLIENT_ID" \
        PEER_CODE_CLIENT_SECRET="$PEER_CODE_CLIENT_SECRET" PEER_REDIRECT_URI="$REDIRECT_URI" PEER_ID_TOKEN_ALG="$ID_TOKEN_ALG" node server.js) >"$RAW/peer-$backend.log" 2>&1 &
    PEER_PID=$!
    if wait_ready "$PEER_PID" "http://127.0.0.1:$PEER_PORT/.well-known/openid-configuration"; then
      local t1; t1=$(now_ms)
      echo "${backend}_peer_ready_ms=$((t1 - t0))" >>"$META"
      sleep 1
      echo "${backend}_peer_idle_rss_kb=$(status_kb "$PEER_PID" VmRSS)" >>"$META"
      log "peer: pid $PEER_PID ready in $((t1 - t0)) ms on 127.0.0.1:$PEER_PORT"
      return 0
    fi
    tail -20 "$RAW/peer-$backend.log" >&2
    peer_diagnostics "$PEER_PID" "$PEER_PORT"
    stop_pid "$PEER_PID"
    PEER_PID=""
    cp "$RAW/peer-$backend.log" "$RAW/peer-$backend-attempt$attempt.log" 2>/dev/null || true
    log "peer did not become ready on 127.0.0.1:$PEER_PORT (attempt $attempt of 2)"
  done
  die "peer did not become ready"
}

# ---------------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------------
# fresh_token SERVER: a new access token to introspect (ours: ES256 JWT; peer: opaque, because
# oidc-provider refuses to introspect JWT access tokens).
fresh_token() {
  local t
  if [ "$1" = ours ]; then
    t=$(curl -s -m 5 "http://127.0.0.1:$OURS_PORT/oauth/token" -H "Host: $OURS_HOST" -H "Authorization: $OURS_AUTH" \
          -d grant_type=client_credentials --data-urlencode 'scope=applications:read' | jq -r '.access_token // empty')
  else
    t=$(curl -s -m 5 "http://127.0.0.1:$PEER_PORT/token" -H "Authorization: $PEER_AUTH" \
          -d grant_type=client_credentials --data-urlencode "resource=$PEER_RESOURCE_OPAQUE" \
          --data-urlencode 'scope=api:read' | jq -r '.access_token // empty')
  fi
  [ -n "$t" ] || die "could not obtain an access token from $1"
  printf '%s' "$t"
}

# set_scenario SERVER SCENARIO: sets URL and the BENCH_* variables read by lib/wrk.lua.
set_scenario() {
  local server=$1 scenario=$2
  if [ "$server" = ours ]; then
    local base="http://127.0.0.1:$OURS_PORT"; BENCH_HOST=$OURS_HOST; BENCH_AUTH=$OURS_AUTH
    case "$scenario" in
      token)      BENCH_METHOD=POST; URL="$base/oauth/token"; BENCH_BODY="grant_type=client_credentials&scope=applications%3Aread" ;;
      introspect) BENCH_METHOD=POST; URL="$base/oauth/introspect"; BENCH_BODY="token=$(fresh_token ours)" ;;
      jwks)       BENCH_METHOD=GET; URL="$base/.well-known/jwks.json"; BENCH_BODY=""; BENCH_AUTH="" ;;
      discovery)  BENCH_METHOD=GET; URL="$base/.well-known/openid-configuration"; BENCH_BODY=""; BENCH_AUTH="" ;;
      # The same cheap management read, once per credential. The JWT is fetched per run (set_scenario
      # runs before each CPU sample): machine tokens live 300 s, enough for a run, not for a round.
      api_key_read) BENCH_METHOD=GET; URL="$base/api/v1/applications?limit=1"; BENCH_BODY=""; BENCH_AUTH="Bearer $OURS_API_KEY" ;;
      jwt_read)     BENCH_METHOD=GET; URL="$base/api/v1/applications?limit=1"; BENCH_BODY=""; BENCH_AUTH="Bearer $(fresh_token ours)" ;;
      *) die "unknown scenario $scenario" ;;
    esac
  else
    local base="http://127.0.0.1:$PEER_PORT"; BENCH_HOST=""; BENCH_AUTH=$PEER_AUTH
    case "$scenario" in
      token)      BENCH_METHOD=POST; URL="$base/token"
                  BENCH_BODY="grant_type=client_credentials&resource=https%3A%2F%2Fapi.bench.example&scope=api%3Aread" ;;
      introspect) BENCH_METHOD=POST; URL="$base/token/introspection"; BENCH_BODY="token=$(fresh_token peer)" ;;
      jwks)       BENCH_METHOD=GET; URL="$base/jwks"; BENCH_BODY=""; BENCH_AUTH="" ;;
      discovery)  BENCH_METHOD=GET; URL="$base/.well-known/openid-configuration"; BENCH_BODY=""; BENCH_AUTH="" ;;
      *) die "unknown scenario $scenario" ;;
    esac
  fi
  export BENCH_METHOD BENCH_BODY BENCH_AUTH BENCH_HOST
}

# probe SERVER SCENARIO: one request with curl; the scenario must answer 200 (introspection: active;
# the management reads: a list of applications).
probe() {
  local server=$1 scenario=$2 out="$WORK/probe.body"
  set_scenario "$server" "$scenario"
  local args=(-s -m 5 -o "$out" -w '%{http_code}' -X "$BENCH_METHOD")
  [ -n "$BENCH_HOST" ] && args+=(-H "Host: $BENCH_HOST")
  [ -n "$BENCH_AUTH" ] && args+=(-H "Authorization: $BENCH_AUTH")
  [ "$BENCH_METHOD" = POST ] && args+=(-H 'Content-Type: application/x-www-form-urlencoded' --data-binary "$BENCH_BODY")
  local code; code=$(curl "${args[@]}" "$URL" || true)
  [ "$code" = 200 ] || die "$server $scenario probe: HTTP $code: $(head -c 300 "$out")"
  if [ "$scenario" = introspect ]; then
    [ "$(jq -r .active "$out")" = true ] || die "$server introspection probe: token not active: $(head -c 300 "$out")"
  fi
  if is_management_read "$scenario"; then
    jq -e '.items | type == "array"' "$out" >/dev/null 2>&1 \
      || die "$server $scenario probe: not a list of applications: $(head -c 300 "$out")"
  fi
  if [ "$scenario" = token ]; then
    local alg; alg=$(jq -r .access_token "$out" | cut -d. -f1 | tr '_-' '/+' | base64 -d 2>/dev/null | jq -r .alg 2>/dev/null || true)
    [ "$alg" = ES256 ] || log "warning: $server access token alg is '$alg', expected ES256"
  fi
  cp "$out" "$RAW/probe-$server-$scenario.json"
}

# load SERVER SCENARIO CONC SECONDS RAWFILE -> prints the BENCH line of lib/wrk.lua.
# The caller runs set_scenario first (so that fetching a token stays outside the CPU sample).
load() {
  local server=$1 scenario=$2 conc=$3 secs=$4 rawfile=$5
  timeout $((secs + 20)) wrk -t1 -c"$conc" -d"${secs}s" --timeout 5s --latency -s "$BENCH_DIR/lib/wrk.lua" "$URL" >"$rawfile" 2>&1 \
    || die "wrk failed or timed out ($server $scenario c=$conc): $(tail -3 "$rawfile")"
  grep -m1 '^BENCH ' "$rawfile" || die "no summary from wrk ($server $scenario c=$conc)"
}

pid_of() { if [ "$1" = ours ]; then echo "$OURS_PID"; else echo "$PEER_PID"; fi; }

# flow_cmd SERVER SCENARIO: FLOW_CMD = the flows driver's command line (without --concurrency,
# --duration) and FLOW_SECRET = the code-flow client's secret (passed in the environment).
flow_cmd() {
  local server=$1 scenario=$2
  if [ "$server" = ours ] && [ "$scenario" = signin_totp ]; then
    # The TOTP keys and spent time steps carry over from run to run against this server.
    FLOW_CMD=("$FLOWS" signin-totp --server ours --base-url "http://127.0.0.1:$OURS_PORT" --host "$OURS_HOST"
      --email "$TOTP_EMAIL" --users "$TOTP_USERS" --totp-state "$TOTP_STATE")
    FLOW_SECRET=""
  elif [ "$server" = ours ] && [ "$scenario" = signin_passkey ]; then
    # The WebAuthn origin is the tenant's issuer, http://$OURS_HOST (RP ID bench.localhost).
    FLOW_CMD=("$FLOWS" signin-passkey --server ours --base-url "http://127.0.0.1:$OURS_PORT" --host "$OURS_HOST"
      --email "$PASSKEY_EMAIL" --users "$BENCH_USERS")
    FLOW_SECRET=""
  elif [ "$server" = ours ] && [ "$scenario" = token_exchange ]; then
    # Its own application, registered with the exchange grant in the setup: the management
    # application stays as the tenant creation made it.
    FLOW_CMD=("$FLOWS" "$scenario" --server ours --base-url "http://127.0.0.1:$OURS_PORT" --host "$OURS_HOST"
      --client-id "$OURS_EXCHANGE_CLIENT_ID")
    FLOW_SECRET=$OURS_EXCHANGE_CLIENT_SECRET
  elif [ "$server" = ours ] && is_client_credentials_flow "$scenario"; then
    # client_credentials as the tenant's management application (the wrk token scenario's client).
    FLOW_CMD=("$FLOWS" "$scenario" --server ours --base-url "http://127.0.0.1:$OURS_PORT" --host "$OURS_HOST"
      --client-id "$OURS_CLIENT_ID")
    FLOW_SECRET=$OURS_CLIENT_SECRET
  elif [ "$server" = ours ]; then
    FLOW_CMD=("$FLOWS" "$scenario" --server ours --base-url "http://127.0.0.1:$OURS_PORT" --host "$OURS_HOST"
      --client-id "$OURS_CODE_CLIENT_ID" --redirect-uri "$REDIRECT_URI" --email "$USER_EMAIL" --users "$BENCH_USERS")
    FLOW_SECRET=$OURS_CODE_CLIENT_SECRET
  else
    FLOW_CMD=("$FLOWS" "$scenario" --server peer --base-url "http://127.0.0.1:$PEER_PORT"
      --client-id "$PEER_CODE_CLIENT_ID" --redirect-uri "$REDIRECT_URI")
    FLOW_SECRET=$PEER_CODE_CLIENT_SECRET
  fi
}

# probe_flow SERVER SCENARIO: one worker, one checked iteration (refresh: the rotated token must
# then be refused; signin_totp: user 1 enrolled, then 303 to /auth/account with a session after
# the second factor; signin_passkey: user 1's passkey registered, then 303 to /auth/account with
# a session after the assertion; token_dpop: token_type DPoP, cnf.jkt the proof key's
# thumbprint, the same proof then refused; token_flows: token_type Bearer, no cnf;
# token_exchange: issued_token_type access_token, no act, the subject token's aud and scope); the
# driver exits non-zero otherwise.
probe_flow() {
  local server=$1 scenario=$2
  local out="$RAW/probe-$server-$scenario.txt"
  flow_cmd "$server" "$scenario"
  BENCH_CLIENT_SECRET=$FLOW_SECRET BENCH_USER_PASSWORD=$BENCH_USER_PASSWORD \
    timeout 180 "${FLOW_CMD[@]}" --probe >"$out" 2>&1 \
    || die "$server $scenario probe failed: $(tail -5 "$out")"
  local facts; facts=$(grep -m1 '^PROBE ok' "$out" | cut -d' ' -f3-) || die "$server $scenario probe printed no PROBE line"
  log "$server $scenario probe: $facts"
  # Sign-ins and device polls issue no tokens to check.
  if is_signin "$scenario" || [ "$scenario" = device_poll ]; then return 0; fi
  if [[ "$facts" != *"access_token=ES256"* ]]; then
    log "warning: $server $scenario access token is not ES256 ($facts)"
  fi
  # client_credentials and its exchange issue no ID token.
  if is_machine_flow "$scenario"; then return 0; fi
  if [[ "$facts" != *"id_token=$ID_TOKEN_ALG"* ]]; then
    die "$server $scenario probe: the ID token is not $ID_TOKEN_ALG ($facts)"
  fi
}

# flow_load SERVER SCENARIO CONC SECONDS RAWFILE: an unsampled driver run (warm-up).
flow_load() {
  local server=$1 scenario=$2 conc=$3 secs=$4 rawfile=$5
  flow_cmd "$server" "$scenario"
  BENCH_CLIENT_SECRET=$FLOW_SECRET BENCH_USER_PASSWORD=$BENCH_USER_PASSWORD \
    timeout $((secs + 600)) "${FLOW_CMD[@]}" --concurrency "$conc" --duration "$secs" >"$rawfile" 2>&1 \
    || die "flows driver failed ($server $scenario c=$conc): $(tail -5 "$rawfile")"
  grep -m1 '^BENCH ' "$rawfile" || die "no summary from the flows driver ($server $scenario c=$conc)"
}

# sample_start / sample_end SERVER PID: CPU ticks of the server (and of the bench database's
# PostgreSQL backends for svc) around the measured part of a run.
sample_start() {
  if [ "$1" = ours ]; then pg_ticks "$WORK/pg0"; else : >"$WORK/pg0"; fi
  C0=$(cpu_ticks "$2")
}
sample_end() {
  C1=$(cpu_ticks "$2")
  if [ "$1" = ours ]; then pg_ticks "$WORK/pg1"; else : >"$WORK/pg1"; fi
}

run_one() {
  local backend=$1 server=$2 scenario=$3 conc=$4 round=$5
  local pid; pid=$(pid_of "$server")
  kill -0 "$pid" 2>/dev/null || die "$server server (pid $pid) is gone"
  local rawfile="$RAW/$backend-$server-$scenario-c$conc-r$round.txt"
  local line
  if is_flow "$scenario"; then
    # The driver's setup (sign-ins, first code flows) is not measured: it waits at a gate, the
    # CPU sample starts, the gate opens, the sample ends with the measured window.
    flow_cmd "$server" "$scenario"
    local gate="$WORK/gate-$backend-$server-$scenario-c$conc-r$round"
    BENCH_CLIENT_SECRET=$FLOW_SECRET BENCH_USER_PASSWORD=$BENCH_USER_PASSWORD \
      timeout $((DURATION + 900)) "${FLOW_CMD[@]}" --concurrency "$conc" --duration "$DURATION" --gate "$gate" \
      >"$rawfile" 2>&1 &
    FLOW_PID=$!
    while [ ! -e "$gate.ready" ]; do
      if ! kill -0 "$FLOW_PID" 2>/dev/null; then
        wait "$FLOW_PID" 2>/dev/null || true; FLOW_PID=""
        die "flows driver failed during setup ($server $scenario c=$conc): $(tail -5 "$rawfile")"
      fi
      sleep 0.02
    done
    sample_start "$server" "$pid"
    touch "$gate.go"
    # The window ends when the driver writes <gate>.done; it then lets the iterations in flight
    # finish (uncounted) instead of disconnecting, and exits.
    while [ ! -e "$gate.done" ] && kill -0 "$FLOW_PID" 2>/dev/null; do sleep 0.01; done
    sample_end "$server" "$pid"
    local rc=0
    wait "$FLOW_PID" || rc=$?
    FLOW_PID=""
    [ "$rc" = 0 ] || die "flows driver failed ($server $scenario c=$conc, exit $rc): $(tail -5 "$rawfile")"
    line=$(grep -m1 '^BENCH ' "$rawfile") || die "no summary from the flows driver ($server $scenario c=$conc)"
  else
    set_scenario "$server" "$scenario"   # token fetch for introspection happens before the CPU sample
    sample_start "$server" "$pid"
    line=$(load "$server" "$scenario" "$conc" "$DURATION" "$rawfile")
    sample_end "$server" "$pid"
  fi
  local c0=$C0 c1=$C1
  local db_ticks; db_ticks=$(pg_delta "$WORK/pg0" "$WORK/pg1")
  local kv; kv=$(sed 's/^BENCH //' <<<"$line")
  local requests duration_us p50_us p99_us max_us non2xx sockerr
  eval "$kv"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
    "$backend" "$server" "$scenario" "$conc" "$round" "$requests" "$duration_us" "$p50_us" "$p99_us" "$max_us" \
    "$non2xx" "$sockerr" "$((c1 - c0))" "$db_ticks" "$(status_kb "$pid" VmRSS)" "$(status_kb "$pid" VmHWM)" >>"$RUNS"
  local rps=$(( requests * 1000000 / (duration_us > 0 ? duration_us : 1) ))
  local cpu_us=$(( (c1 - c0) * 1000000 / CLK_TCK / (requests > 0 ? requests : 1) ))
  local db_us=$(( db_ticks * 1000000 / CLK_TCK / (requests > 0 ? requests : 1) ))
  local unit=req; case "$scenario" in authcode|authcode_par) unit=flow ;; esac; is_signin "$scenario" && unit=sign-in
  log "$backend r$round $scenario c=$conc $server: ${rps} $unit/s p50 $((p50_us))us p99 $((p99_us))us cpu ${cpu_us}us/$unit (+db ${db_us}us) non2xx=$non2xx sockerr=$sockerr"
  if [ "$scenario" = signin_totp ]; then
    # Iterations that found no user with a time step to spend waited (untimed) instead of
    # replaying; any wait means too few users for this machine's sign-in rate.
    local users=0 waits=0 waited_ms=0
    eval "$(grep -m1 '^TOTP ' "$rawfile" | sed 's/^TOTP //' || true)"
    [ -e "$RAW/totp.tsv" ] || printf 'backend\tconc\tround\tusers\twaits\twaited_ms\n' >"$RAW/totp.tsv"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$backend" "$conc" "$round" "$users" "$waits" "$waited_ms" >>"$RAW/totp.tsv"
    if [ "$waits" != 0 ]; then
      log "warning: signin_totp c=$conc: $waits iteration(s) waited $waited_ms ms in total for a TOTP time step ($users users; raise BENCH_TOTP_USERS)"
    fi
  fi
  if [ "$non2xx" != 0 ] || [ "$sockerr" != 0 ]; then
    FAILED_RUNS=$((FAILED_RUNS + 1))
    log "ERROR: $non2xx non-2xx answers, $sockerr socket errors ($backend $server $scenario c=$conc; see $rawfile)"
  fi
}

bench_backend() {
  local backend=$1 db_url
  case "$backend" in
    sqlite) db_url="sqlite://$WORK/ours-sqlite/svc.db"; mkdir -p "$WORK/ours-sqlite" ;;
    postgres)
      PG_DB="svc_bench_$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')"
      psql "$PG_ADMIN_URL" -v ON_ERROR_STOP=1 -qc "CREATE DATABASE $PG_DB" >/dev/null \
        || { PG_DB=""; die "could not create database on $PG_ADMIN_URL"; }
      db_url="${PG_ADMIN_URL%/*}/$PG_DB"
      # Loopback PostgreSQL: plain TCP. The server may offer SSL and sqlx's default (prefer) would
      # then encrypt every round trip, a cost that belongs to the network, not to svc.
      case "$PG_ADMIN_URL" in
        *\?*) ;;
        postgres://*@127.0.0.1[:/]*|postgres://*@localhost[:/]*|postgresql://*@127.0.0.1[:/]*|postgresql://*@localhost[:/]*)
          db_url="$db_url?sslmode=disable" ;;
      esac
      log "postgres: created database $PG_DB"
      ;;
    *) die "unknown backend $backend" ;;
  esac
  TOTP_STATE="$WORK/totp-$backend.tsv"
  rm -f "$TOTP_STATE"
  start_ours "$backend" "$db_url"
  start_peer "$backend"

  for scenario in $SCENARIOS; do
    if is_flow "$scenario"; then
      probe_flow ours "$scenario"
      if peer_runs "$scenario"; then probe_flow peer "$scenario"; fi
    else
      probe ours "$scenario"
      if peer_runs "$scenario"; then probe peer "$scenario"; fi
    fi
  done
  if [ "$WARMUP" -gt 0 ]; then
    log "$backend: warm-up ${WARMUP}s per scenario and server"
    for scenario in $SCENARIOS; do
      for server in ours peer; do
        [ "$server" = peer ] && ! peer_runs "$scenario" && continue
        local warm="$RAW/$backend-$server-$scenario-warmup.txt"
        if is_flow "$scenario"; then
          flow_load "$server" "$scenario" 16 "$WARMUP" "$warm" >/dev/null
        else
          set_scenario "$server" "$scenario"
          load "$server" "$scenario" 16 "$WARMUP" "$warm" >/dev/null
        fi
      done
    done
  fi

  # Interleaved: for each round, every (scenario, concurrency) cell runs ours then peer (A B A B).
  for round in $(seq 1 "$ROUNDS"); do
    for scenario in $SCENARIOS; do
      # The raw Argon2id rate is taken right before the backend's first sign-in run (both servers
      # idle), so that it sees the same machine as the sign-ins it is compared with.
      if [ "$scenario" = signin ] && [ "$round" = 1 ]; then argon2_raw "$backend"; fi
      # Likewise the raw cost of one ES256 proof, before the first DPoP run.
      if [ "$scenario" = token_dpop ] && [ "$round" = 1 ]; then p256_raw "$backend"; fi
      for conc in $(concurrencies "$scenario"); do
        run_one "$backend" ours "$scenario" "$conc" "$round"
        if peer_runs "$scenario"; then run_one "$backend" peer "$scenario" "$conc" "$round"; fi
      done
    done
  done

  echo "${backend}_ours_peak_rss_kb=$(status_kb "$OURS_PID" VmHWM)" >>"$META"
  echo "${backend}_peer_peak_rss_kb=$(status_kb "$PEER_PID" VmHWM)" >>"$META"
  echo "${backend}_ours_end_rss_kb=$(status_kb "$OURS_PID" VmRSS)" >>"$META"
  echo "${backend}_peer_end_rss_kb=$(status_kb "$PEER_PID" VmRSS)" >>"$META"
  stop_pid "$OURS_PID"; OURS_PID=""
  stop_pid "$PEER_PID"; PEER_PID=""
  [ "$backend" = postgres ] && drop_pg_db
  return 0
}

for backend in $BACKENDS; do
  bench_backend "$backend"
done

echo "elapsed_s=$(( $(date +%s) - T_START ))" >>"$META"
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$META"
python3 "$BENCH_DIR/lib/report.py" "$RAW" "$OUT"
log "wrote $OUT ($(( $(date +%s) - T_START )) s in total)"
if [ "$FAILED_RUNS" -gt 0 ]; then
  die "$FAILED_RUNS load run(s) had non-2xx answers or socket errors (listed in $OUT)"
fi
