#!/usr/bin/env bash
# Makes sure the real services the tests use are running on loopback: PostgreSQL on
# 127.0.0.1:5432 (trust auth for the test role), Redis on 127.0.0.1:6379 and Memcached on
# 127.0.0.1:11211. Installs them from Debian's packages when absent. Idempotent; safe to run on a
# machine where they already run.
set -euo pipefail

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
apt_updated=0
apt_install() {
  if [ "$apt_updated" -eq 0 ]; then as_root apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }

if ! command -v pg_isready >/dev/null 2>&1 || ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
  echo "installing PostgreSQL (Debian package)"
  apt_install postgresql postgresql-client
fi
if ! pg_up; then
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  echo "starting PostgreSQL $version"
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  for _ in $(seq 1 30); do pg_up && break; sleep 1; done
fi
pg_up || { echo "PostgreSQL did not come up on 127.0.0.1:5432" >&2; exit 1; }

# The tests connect as postgres@127.0.0.1 without a password. Debian's default pg_hba asks for
# one on TCP, so on a machine we set up ourselves, trust loopback (a CI box, never production).
if ! psql -h 127.0.0.1 -U postgres -d postgres -Atqc 'select 1' >/dev/null 2>&1; then
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  hba=/etc/postgresql/$version/main/pg_hba.conf
  echo "allowing trust auth on loopback in $hba (test machine)"
  as_root sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" main reload
  sleep 1
  psql -h 127.0.0.1 -U postgres -d postgres -Atqc 'select 1' >/dev/null
fi

# Leftovers of interrupted earlier runs.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname like 'svc\_test\_%'" |
  while read -r db; do psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null || true; done

if ! command -v redis-server >/dev/null 2>&1; then
  echo "installing Redis (Debian package)"
  apt_install redis-server redis-tools
fi
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "starting Redis"
  mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /tmp --logfile /tmp/svc-redis.log
  for _ in $(seq 1 20); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.5; done
fi
redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null || { echo "Redis did not come up on 127.0.0.1:6379" >&2; exit 1; }
# Memcached for the Memcached coordination backend's tests (no UDP: -U 0).
mc_up() { timeout 2 bash -c 'exec 3<>/dev/tcp/127.0.0.1/11211 && printf "version\r\n" >&3 && head -c 8 <&3 | grep -q VERSION' 2>/dev/null; }
if ! command -v memcached >/dev/null 2>&1; then
  echo "installing Memcached (Debian package)"
  apt_install memcached
fi
if ! mc_up; then
  echo "starting Memcached"
  # -u: memcached refuses to run as root without being told which user to be.
  memcached -d -l 127.0.0.1 -p 11211 -U 0 -u "$(id -un)"
  for _ in $(seq 1 20); do mc_up && break; sleep 0.5; done
fi
mc_up || { echo "Memcached did not come up on 127.0.0.1:11211" >&2; exit 1; }
# HAProxy for the cluster test (crates/runtime/tests/it/cluster): installed only; the test runs
# its own instance in the foreground on a free loopback port and stops it.
if ! command -v haproxy >/dev/null 2>&1; then
  echo "installing HAProxy (Debian package)"
  apt_install haproxy
fi
echo "services ready: PostgreSQL 127.0.0.1:5432, Redis 127.0.0.1:6379, Memcached 127.0.0.1:11211"
