#!/usr/bin/env bash
# The census at scale, on each state database engine: plants a namespace
# of 20 registries x 5 versions (bench/scale), starts jig-server with its
# state in SQLite (the default: a file under STORAGE_ROOT) and then in
# PostgreSQL (DATABASE_URL; scripts/ci/start-postgres.sh starts one), and
# with bench/census:
#   - fills the namespace with N projects' reports (32 at once), recording
#     HISTORY days of history along the way, and prints reports/s overall
#     and for the last tenth (the rate at N projects);
#   - replaces a tenth of them (CI reporting again) and prints reports/s;
#   - times GET /census/@ns, GET /census/@ns/<registry> and its
#     ?history=90d one at a time: p50, p95, p99;
#   - prints the server's RSS after start and its peak after all that.
#
# Usage: bench/census.sh [N]          (default 100000)
# Environment:
#   ENGINES="sqlite postgres"   the engines to measure
#   HISTORY=90                  days of history recorded while filling
#   CONNS=32                    concurrent reporters
# Everything listens on 127.0.0.1 only; the servers are stopped on exit.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

n=${1:-100000}
ENGINES=${ENGINES:-sqlite postgres}
HISTORY=${HISTORY:-90}
CONNS=${CONNS:-32}
admin=bench-admin-token

echo "building jig-server, the planter, loadgen and the census load..." >&2
(cd "$root" && go build -o "$work/jig-server" ./cmd/jig-server && go build -o "$work/plant" ./bench/scale &&
	go build -o "$work/loadgen" ./bench/loadgen && go build -o "$work/census" ./bench/census)

rss() { awk -v k="$2" '$1 == k":" {printf "%.1f MB", $2/1024}' "/proc/$1/status"; }

for engine in $ENGINES; do
	data="$work/data-$engine"
	"$work/plant" -dir "$data" -n 20 -versions 5 -namespaces 1 >/dev/null
	env=(STORAGE_ROOT="$data" HOST=127.0.0.1 TRUST_PROXY=true LOG_LEVEL=warn ADMIN_TOKEN="$admin"
		CENSUS_REPORTER_LIMIT=0 MAX_CONCURRENT_UPLOADS=64)
	state="$data/.jig/state/state.db"
	if [[ "$engine" == postgres ]]; then
		eval "$("$root/scripts/ci/start-postgres.sh")"
		db="jig_bench_$$"
		psql -X -q "$JIG_TEST_DATABASE_URL" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
		state="${JIG_TEST_DATABASE_URL%%/postgres\?*}/$db?sslmode=disable"
		env+=(DATABASE_URL="$state")
	fi
	port=$("$work/loadgen" -free-port)
	env "${env[@]}" PORT="$port" "$work/jig-server" >"$work/server-$engine.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	if ! "$work/loadgen" -url "http://127.0.0.1:$port" -wait 60s; then
		cat "$work/server-$engine.log" >&2
		exit 1
	fi
	echo "== $engine: $n projects, $HISTORY days of history, $CONNS reporters at once"
	echo "server RSS after start: $(rss "$pid" VmRSS)"
	"$work/census" -url "http://127.0.0.1:$port" -ns @scale0 -n "$n" -c "$CONNS" -token "$admin" \
		-history "$HISTORY" -state "$state"
	echo "server RSS now: $(rss "$pid" VmRSS), peak: $(rss "$pid" VmHWM)"
	kill -TERM "$pid"
	wait "$pid" 2>/dev/null || true
	if [[ "$engine" == postgres ]]; then
		psql -X -q "$JIG_TEST_DATABASE_URL" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"
	fi
done
