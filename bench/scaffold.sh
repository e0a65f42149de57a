#!/usr/bin/env bash
# The scaffold benchmark (issue 14, client side), in one invocation:
#
# 1. "jig init -t @presets/node --ci --skip-install --skip-git" with the
#    built jig, as a new process each time, against a jig-server on
#    loopback (fresh disk storage seeded with the starter catalog): INITS
#    runs with an empty cache and INITS with a warm one, per jig binary.
#    It prints the minimum and median wall time, the median CPU time
#    (user+sys) and the load average, since the machine's other work
#    inflates wall time.
# 2. BenchmarkInitNodePreset (registryclient/apply): the same init in
#    process against the real handler, locally and through links adding
#    50 ms per round trip (plain HTTP with h2c, plain HTTP/1.1 as with the
#    reference, TLS with HTTP/2), printing per init: time, requests, round
#    trips as the server sees them, elapsed round trips (rtts/op, set-up
#    included), TCP connections and TLS handshakes.
#
# Usage: bench/scaffold.sh [label=/path/to/jig ...]
#   No argument (or a path "build") builds ./cmd/jig from this tree the way
#   "make build" and the release archives do (static, -trimpath, stripped):
#   the binary users run, which starts faster than a default "go build"
#   (with cgo, a dynamically linked one). To compare, build the other
#   binary the same way first:
#     git worktree add /tmp/old main && (cd /tmp/old && make build && cp bin/jig /tmp/jig-old)
#     bench/scaffold.sh old=/tmp/jig-old new=build
#   The jig-server is always built from this tree.
# Environment:
#   INITS=15      jig init runs per binary and cache state
#   BENCHTIME=20x iterations of each BenchmarkInitNodePreset case
# Everything listens on 127.0.0.1 only; everything started is stopped on exit.
set -euo pipefail
TIMEFORMAT="%3R %3U %3S"

INITS=${INITS:-15}
BENCHTIME=${BENCHTIME:-20x}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
server_pid=""

cleanup() {
	if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill -TERM "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

echo "building jig-server and jig..."
# Both commands as the release archives are built.
make -s -C "$root" build BIN="$work/"
labels=() bins=()
[[ $# -eq 0 ]] && set -- build
for arg in "$@"; do
	label=${arg%%=*} path=${arg#*=}
	[[ $arg == *=* ]] || label=$path
	if [[ $path == build ]]; then
		cp "$work/jig" "$work/jig-$label"
		path=$work/jig-$label
	fi
	labels+=("$label") bins+=("$path")
done

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$work/server"

# start_server (re)starts jig-server on the same storage. Each batch of
# INITS runs gets a fresh server: a scaffold makes 28 requests, and the
# default rate limit (1200 a minute per client address) would otherwise
# answer a later batch with 429 and Retry-After: 60.
start_server() {
	if [[ -n $server_pid ]]; then
		kill -TERM "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	(cd "$work/server" && HOST=127.0.0.1 PORT=$port STORAGE_ROOT="$work/server/data" LOG_LEVEL=warn \
		NODE_ENV=production exec "$work/jig-server" >>"$work/server/log" 2>&1) &
	server_pid=$!
	for _ in $(seq 100); do
		curl -fs "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
		sleep 0.1
	done
	curl -fs "http://127.0.0.1:$port/health" >/dev/null || { cat "$work/server/log" >&2; exit 1; }
}
start_server

# stats FILE: "min X ms, median Y ms, cpu median Z ms" from lines "wall user sys".
stats() {
	python3 - "$1" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1]) if l[:1].isdigit()]
wall = [float(r[0]) * 1000 for r in rows]
cpu = [(float(r[1]) + float(r[2])) * 1000 for r in rows]
print("min %5.0f ms, median %5.0f ms, cpu median %4.0f ms" % (min(wall), st.median(wall), st.median(cpu)))
PY
}

echo
echo "jig init -t @presets/node against jig-server on loopback, $INITS runs each (load average before: $(cut -d' ' -f1-3 /proc/loadavg)):"
for i in "${!bins[@]}"; do
	for cache in cold warm; do
		home=$work/home-$i-$cache proj=$work/proj-$i-$cache times=$work/times-$i-$cache
		mkdir -p "$home" "$proj"
		: >"$times"
		start_server
		for n in $(seq "$INITS"); do
			[[ $cache == cold ]] && rm -rf "$home/cache"
			rm -rf "$proj/app"
			# bash's time keyword, to the millisecond (GNU time's %e counts
			# hundredths).
			cd "$proj"
			{ time HOME=$home JIG_CACHE_DIR=$home/cache JIG_REGISTRY_URL=http://127.0.0.1:$port NO_COLOR=1 \
				"${bins[$i]}" init -t @presets/node -n app \
				--ci --skip-install --skip-git >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }; } 2>>"$times"
			cd "$root"
		done
		printf '  %-10s %-5s cache: %s\n' "${labels[$i]}" "$cache" "$(stats "$times")"
	done
done
echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "BenchmarkInitNodePreset ($BENCHTIME per case):"
(cd "$root" && go test -run '^$' -bench BenchmarkInitNodePreset -benchtime "$BENCHTIME" ./registryclient/apply/ | grep -E '^Benchmark')
echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
