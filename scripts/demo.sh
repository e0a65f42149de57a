#!/usr/bin/env bash
# The main job, end to end: build jig and jig-server, start the server on
# loopback with a fresh storage (seeded with the built-in starter catalog),
# scaffold a project from the `node` preset, and show what was written.
#
#   bash scripts/demo.sh [target-dir]
#
# Set INSTALL=1 to also run the package manager install and git init.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:-$(mktemp -d)/demo}"
bin="$(mktemp -d)"
data="$(mktemp -d)"
port="${PORT:-18080}"

echo "== building jig and jig-server into $bin"
go build -o "$bin/jig" ./cmd/jig
go build -o "$bin/jig-server" ./cmd/jig-server

echo "== starting jig-server on 127.0.0.1:$port (storage $data)"
STORAGE_ROOT="$data" HOST=127.0.0.1 PORT="$port" LOG_FORMAT=json "$bin/jig-server" >"$bin/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -fsS "http://127.0.0.1:$port/health"; echo

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
