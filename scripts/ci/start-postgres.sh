#!/usr/bin/env bash
# start-postgres.sh: start a throwaway PostgreSQL server on loopback for
# jig's state-store tests and print the environment the tests read.
#
#   eval "$(scripts/ci/start-postgres.sh)"   # start (or reuse) and export
#   scripts/ci/start-postgres.sh stop        # stop it and remove its data
#
# Idempotent: a server this script started that still answers is reused.
# Installs Debian's postgresql package when initdb is not found. The server
# trusts local connections only (127.0.0.1, the test user), keeps no data
# worth keeping (fsync off) and listens on JIG_PG_PORT (default 15432).
# When run as root, the server runs as the postgres user. Only the export
# line goes to stdout; progress goes to stderr.
set -euo pipefail

port="${JIG_PG_PORT:-15432}"
state="${JIG_PG_STATE:-${TMPDIR:-/tmp}/jig-pg-$(id -u)}"
log() { echo "start-postgres: $*" >&2; }

bindir=""
for d in /usr/lib/postgresql/*/bin; do
  [[ -x "$d/initdb" ]] && bindir="$d"
done
if [[ -z "$bindir" && "${1:-}" != "stop" ]]; then
  log "installing postgresql (Debian)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq postgresql >/dev/null
  for d in /usr/lib/postgresql/*/bin; do
    [[ -x "$d/initdb" ]] && bindir="$d"
  done
fi

as_owner() { # run a command as the data folder's owner
  if [[ "$(id -u)" == 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

if [[ "${1:-}" == "stop" ]]; then
  if [[ -f "$state/data/postmaster.pid" ]]; then
    as_owner "$bindir/pg_ctl" -D "$state/data" -m immediate stop >/dev/null 2>&1 || true
    log "stopped"
  fi
  rm -rf "$state"
  exit 0
fi

url="postgres://jig@127.0.0.1:${port}/postgres?sslmode=disable"
if [[ -f "$state/data/postmaster.pid" ]] && "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port"; then
  log "reusing the server on port $port"
  echo "export JIG_TEST_DATABASE_URL='$url'"
  exit 0
fi

rm -rf "$state"
mkdir -p "$state"
if [[ "$(id -u)" == 0 ]]; then chown postgres "$state"; fi
as_owner "$bindir/initdb" -D "$state/data" -U jig --auth=trust -E UTF8 --locale=C >"$state/initdb.log" 2>&1 ||
  { cat "$state/initdb.log" >&2; exit 1; }
as_owner "$bindir/pg_ctl" -D "$state/data" -l "$state/server.log" -w -t 60 \
  -o "-h 127.0.0.1 -p $port -k $state -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
  start >/dev/null || { cat "$state/server.log" >&2; exit 1; }
log "PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (data in $state)"
echo "export JIG_TEST_DATABASE_URL='$url'"
