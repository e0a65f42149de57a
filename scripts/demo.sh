#!/usr/bin/env bash
# The main job, end to end: build jig and jig-server, start the server on
# loopback with a fresh storage (seeded with the built-in starter catalog),
# scaffold a project from the `node` preset, and show what was written.
#
#   bash scripts/demo.sh [target-dir]
#
# Set INSTALL=1 to also run the package manager install and git init, and
# PORT to use another port than 18080. Without a target-dir the project is
# written to a temporary folder that is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="$(mktemp -d "${TMPDIR:-/tmp}/jig-demo.XXXXXX")"
target="${1:-$tmp/demo}"
bin="$tmp/bin"
data="$tmp/data"
mkdir -p "$bin" "$data"
port="${PORT:-18080}"
# The server log outlives a failed run, so that it can be read.
log="$(mktemp "${TMPDIR:-/tmp}/jig-demo-server.XXXXXX.log")"
server=""
cleanup() {
  status=$?
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$tmp"
  if [ "$status" -eq 0 ]; then rm -f "$log"; fi
  exit "$status"
}
trap cleanup EXIT
fail() {
  echo "demo: $*" >&2
  echo "demo: jig-server log: $log" >&2
  tail -n 20 "$log" >&2 || true
  exit 1
}

echo "== building jig and jig-server into $bin"
echo "   (the first build downloads modules and compiles everything: this can take a minute)"
go build -v -o "$bin/jig" ./cmd/jig 2>&1 | sed -u 's/^/   /'
go build -v -o "$bin/jig-server" ./cmd/jig-server 2>&1 | sed -u 's/^/   /'

echo "== starting jig-server on 127.0.0.1:$port (storage $data, log $log)"
STORAGE_ROOT="$data" HOST=127.0.0.1 PORT="$port" LOG_FORMAT=json "$bin/jig-server" >"$log" 2>&1 &
server=$!
# Wait until this server (not another one on the same port) listens.
for _ in $(seq 1 300); do
  if ! kill -0 "$server" 2>/dev/null; then
    wait "$server" 2>/dev/null || true
    server=""
    fail "jig-server could not start on 127.0.0.1:$port (is the port taken? try PORT=18081)"
  fi
  grep -q 'Server listening' "$log" && break
  sleep 0.1
done
grep -q 'Server listening' "$log" || fail "jig-server did not start listening within 30 s"
curl -fsS "http://127.0.0.1:$port/health" || fail "jig-server does not answer /health"
echo

export JIG_CONFIG="$bin/jigrc"
export JIG_REGISTRY_URL="http://127.0.0.1:$port"

echo "== jig list"
"$bin/jig" list
"$bin/jig" list @main

mkdir -p "$(dirname "$target")"
cd "$(dirname "$target")"
echo "== jig init -t @presets/node -n $(basename "$target")"
if [ "${INSTALL:-0}" = 1 ]; then
  "$bin/jig" init -t @presets/node -n "$(basename "$target")"
else
  "$bin/jig" init -t @presets/node -n "$(basename "$target")" --ci
fi

echo "== project at $target"
(cd "$target" && find . -path ./node_modules -prune -o -path ./.git -prune -o -type f -print | sort)
echo "== jig.json"
cat "$target/jig.json"
