#!/usr/bin/env bash
# Dependency-direction rules of ARCHITECTURE.md ("Rules that keep it easy to change", rule 1),
# checked on the resolved graph of normal (non-dev) dependencies. Exits non-zero on a violation.
set -euo pipefail
cd "$(dirname "$0")/.."

failures=0
deps_of() { cargo tree -q -p "$1" -e normal --prefix none -f '{p}' | awk '{print $1}' | sort -u; }

forbid() { # forbid CRATE DEP... : CRATE must not reach any DEP
  local crate=$1; shift
  local graph; graph=$(deps_of "$crate")
  for dep in "$@"; do
    if grep -qx -- "$dep" <<<"$graph"; then
      echo "dependency rule broken: $crate reaches $dep" >&2
      failures=$((failures + 1))
    fi
  done
}

# svc-domain is pure: no IO, no async runtime.
forbid svc-domain tokio sqlx axum reqwest hyper svc-store svc-config svc-http
# Storage ports know no database driver and no HTTP.
forbid svc-store sqlx axum tokio svc-config svc-http
# Configuration knows no engine, framework or database.
forbid svc-config sqlx axum tokio svc-store svc-http
# Only svc-store-* see sqlx; only svc-http sees axum; HTTP never sees config or a backend.
forbid svc-http sqlx svc-config svc-store-sqlite svc-store-postgres
forbid svc-store-sqlite axum svc-http svc-config svc-store-postgres
forbid svc-store-postgres axum svc-http svc-config svc-store-sqlite
# Cryptography is pure computation: no runtime, framework or storage.
forbid svc-crypto tokio axum sqlx svc-store svc-config svc-http
# The KMS daemon stands alone: it shares no code with the service it protects keys for.
forbid svc-kms svc-store svc-config svc-http svc-oauth svc-crypto axum sqlx
# Engines know ports, not frameworks, backends, configuration or the KMS wire protocol.
forbid svc-oauth axum sqlx svc-config svc-store-sqlite svc-store-postgres svc-kms svc-http svc-manage
forbid svc-manage axum sqlx svc-config svc-store-sqlite svc-store-postgres svc-kms svc-http svc-oauth
forbid svc-authn axum sqlx svc-config svc-store-sqlite svc-store-postgres svc-kms svc-http svc-oauth
forbid svc-webhooks axum sqlx svc-config svc-store-sqlite svc-store-postgres svc-kms svc-http svc-oauth svc-manage svc-authn
# The backend SDK is what resource servers embed: it knows no server crate at all.
forbid svc-sdk svc-domain svc-store svc-config svc-http svc-oauth svc-manage svc-crypto svc-kms sqlx axum

if [ "$failures" -ne 0 ]; then
  echo "$failures dependency rule(s) broken" >&2
  exit 1
fi
echo "dependency rules hold"
