#!/usr/bin/env bash
# Load test for jig-server: builds it, starts it on loopback with a fresh
# storage (seeded with the starter catalog on first start) and
# TRUST_PROXY=true, sends mixed reads (latest manifests, versioned manifests,
# files) with "Accept-Encoding: br, gzip" from many distinct X-Forwarded-For
# addresses for a bounded time, prints requests/s and latency percentiles,
# then stops the server.
#
# Usage: bench/load.sh            (from the repository root or anywhere)
# Environment:
#   DURATION=20s     how long to send requests
#   CONNS=64         concurrent connections
#   THREADS=1        wrk threads (the server gets the other core on 2 cores)
#   LOG_LEVEL=info   server log level (info writes one line per request)
#   LOADGEN=go       use the Go load generator even if wrk is installed
#   STORAGE_BACKEND=s3  serve from S3 instead of a fresh disk folder; passes
#                    S3_ENDPOINT, S3_BUCKET, S3_REGION, S3_ACCESS_KEY_ID,
#                    S3_SECRET_ACCESS_KEY, STORAGE_CACHE_MB and STORAGE_CACHE_TTL
#                    through, and S3_PREFIX (default: jig-load-<random>/, a
#                    fresh corner of the bucket, seeded and left there).
#                    With the test server of scripts/ci/start-s3.sh:
#                      eval "$(scripts/ci/start-s3.sh)"
#                      STORAGE_BACKEND=s3 S3_ENDPOINT=$JIG_TEST_S3_ENDPOINT \
#                      S3_BUCKET=$JIG_TEST_S3_BUCKET S3_ACCESS_KEY_ID=$JIG_TEST_S3_ACCESS_KEY \
#                      S3_SECRET_ACCESS_KEY=$JIG_TEST_S3_SECRET_KEY S3_REGION=us-east-1 bench/load.sh
#   WARMUP=3s        read every path for this long before measuring (fills
#                    the S3 read cache; 0s to skip)
set -euo pipefail

DURATION=${DURATION:-20s}
CONNS=${CONNS:-64}
THREADS=${THREADS:-1}
LOG_LEVEL=${LOG_LEVEL:-info}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
server_pid=""

cleanup() {
	if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill -TERM "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

echo "building jig-server and loadgen..."
(cd "$root" && go build -o "$work/jig-server" ./cmd/jig-server && go build -o "$work/loadgen" ./bench/loadgen)

port=$("$work/loadgen" -free-port)
base="http://127.0.0.1:$port"
mkdir -p "$work/data"
storage_env=(STORAGE_ROOT="$work/data")
if [[ "${STORAGE_BACKEND:-disk}" == s3 || "${STORAGE_BACKEND:-}" == r2 ]]; then
	storage_env=(STORAGE_BACKEND="$STORAGE_BACKEND" S3_PREFIX="${S3_PREFIX:-jig-load-$RANDOM$RANDOM/}" STATE_DIR="$work/state")
	for v in S3_ENDPOINT S3_BUCKET S3_REGION S3_ACCESS_KEY_ID S3_SECRET_ACCESS_KEY R2_ACCOUNT_ID STORAGE_CACHE_MB STORAGE_CACHE_TTL; do
		if [[ -n "${!v:-}" ]]; then storage_env+=("$v=${!v}"); fi
	done
fi
(
	cd "$work" # no stray .env is read
	exec env -i PATH="$PATH" HOME="$work" \
		PORT="$port" HOST=127.0.0.1 "${storage_env[@]}" \
		TRUST_PROXY=true NODE_ENV=production LOG_LEVEL="$LOG_LEVEL" \
		"$work/jig-server" >"$work/server.log" 2>&1
) &
server_pid=$!

if ! "$work/loadgen" -url "$base" -wait 30s; then
	echo "jig-server did not become healthy; its log:" >&2
	tail -n 50 "$work/server.log" >&2
	exit 1
fi
"$work/loadgen" -url "$base" -paths-only >"$work/paths.txt"
echo "jig-server $base: $(wc -l <"$work/paths.txt") paths (latest, versioned, files), log level $LOG_LEVEL"
echo "storage: ${storage_env[0]}"
if [[ "${WARMUP:-3s}" != 0s && "${WARMUP:-3s}" != 0 ]]; then
	echo "warming up for ${WARMUP:-3s}..."
	"$work/loadgen" -url "$base" -paths "$work/paths.txt" -duration "${WARMUP:-3s}" -c 8 >/dev/null
fi

if command -v wrk >/dev/null && [[ "${LOADGEN:-}" != go ]]; then
	echo "wrk -t$THREADS -c$CONNS -d$DURATION (random X-Forwarded-For per request)"
	wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency -s "$root/bench/load.lua" "$base" -- "$work/paths.txt"
else
	"$work/loadgen" -url "$base" -paths "$work/paths.txt" -duration "$DURATION" -c "$CONNS"
fi

limited=$(grep -c '"statusCode":429' "$work/server.log" || true)
echo "server: $(grep -c '"msg":"request completed"' "$work/server.log" || true) request log lines, $limited rate limited"
