#!/usr/bin/env bash
# What jig-server's costs grow with: plants N registries x VERSIONS
# versions in a fresh disk storage (bench/scale), starts jig-server on it,
# and prints, each measured in this one run:
#   - the time from exec until /health answers 200;
#   - requests/s of a small manifest read (the yardstick), of /search?q=lint,
#     of the web catalog's home page, of one namespace's registry listing
#     and of /namespaces, each as a ratio to the manifest read;
#   - the server's peak RSS (VmHWM) after the load.
# Run it at several sizes to see which figures grow with the catalog:
#   bench/scale.sh 1000; bench/scale.sh 10000; bench/scale.sh 100000
#
# Usage: bench/scale.sh N
# Environment:
#   VERSIONS=3       versions per registry
#   NAMESPACES=10    namespaces the registries are spread over
#   DURATION=5s      length of each load run
#   CONNS=16         concurrent connections
#   SERVER=build     a jig-server binary to measure instead of this tree's
#   KEEP=            a folder to plant into and keep (planting 100k takes a
#                    while; a folder that already holds a planted catalog of
#                    the same size is reused)
#   S3=1             serve the catalog from versitygw (scripts/ci/start-s3.sh
#                    starts it; its posix backend serves the planted folder
#                    as a bucket prefix) instead of disk storage
# Everything listens on 127.0.0.1 only; the server is stopped on exit.
set -euo pipefail

n=${1:?usage: bench/scale.sh N}
VERSIONS=${VERSIONS:-3}
NAMESPACES=${NAMESPACES:-10}
DURATION=${DURATION:-5s}
CONNS=${CONNS:-16}
SERVER=${SERVER:-build}
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
trap cleanup EXIT

echo "building loadgen, the planter and jig-server..." >&2
(cd "$root" && go build -o "$work/loadgen" ./bench/loadgen && go build -o "$work/plant" ./bench/scale)
if [[ "$SERVER" == build ]]; then
	(cd "$root" && go build -o "$work/jig-server" ./cmd/jig-server)
	SERVER="$work/jig-server"
fi

S3=${S3:-}
if [[ -n "$S3" ]]; then
	eval "$("$root/scripts/ci/start-s3.sh")"
	s3state="${JIG_S3_STATE:-${TMPDIR:-/tmp}/jig-s3-$(id -u)}"
	s3prefix="scale-$n-$VERSIONS-$NAMESPACES"
	# versitygw's posix backend: bucket/prefix is a folder of its data.
	KEEP="$s3state/data/$JIG_TEST_S3_BUCKET/$s3prefix"
fi
storage=${KEEP:-$work/storage}
stamp="$storage/.scale-$n-$VERSIONS-$NAMESPACES"
if [[ ! -e "$stamp" ]]; then
	rm -rf "$storage"
	echo "planting $n registries x $VERSIONS versions in $storage..." >&2
	start=$(date +%s)
	"$work/plant" -dir "$storage" -n "$n" -versions "$VERSIONS" -namespaces "$NAMESPACES"
	echo "planted in $(($(date +%s) - start)) s" >&2
	touch "$stamp"
fi
sync

port=$("$work/loadgen" -free-port)
base="http://127.0.0.1:$port"
t0=$(date +%s%N)
if [[ -n "$S3" ]]; then
	export STORAGE_BACKEND=s3 S3_ENDPOINT="$JIG_TEST_S3_ENDPOINT" S3_BUCKET="$JIG_TEST_S3_BUCKET" \
		S3_PREFIX="$s3prefix/" S3_REGION="$JIG_TEST_S3_REGION" \
		S3_ACCESS_KEY_ID="$JIG_TEST_S3_ACCESS_KEY" S3_SECRET_ACCESS_KEY="$JIG_TEST_S3_SECRET_KEY" \
		STATE_DIR="$work/state"
fi
STORAGE_ROOT="$storage" PORT="$port" HOST=127.0.0.1 TRUST_PROXY=true LOG_LEVEL=warn \
	"$SERVER" >"$work/server.log" 2>&1 &
server_pid=$!
if ! "$work/loadgen" -url "$base" -wait 120s; then
	cat "$work/server.log" >&2
	exit 1
fi
t1=$(date +%s%N)
start_ms=$(((t1 - t0) / 1000000))
# The first search loads the catalog index: from its snapshot when the
# storage has one (a server used it before), else by reading every
# registry once (then written as the snapshot).
snapshot=no
[[ -e "$storage/.index/snapshot.json" ]] && snapshot=yes
t2=$(date +%s%N)
curl -fsS -o /dev/null "$base/search?q=lint"
t3=$(date +%s%N)
index_ms=$(((t3 - t2) / 1000000))

# rate PATH: requests/s of GET PATH (the loadgen's own figure).
rate() {
	printf '%s\n' "$1" >"$work/paths.txt"
	"$work/loadgen" -url "$base" -paths "$work/paths.txt" -duration "$DURATION" -c "$CONNS" >"$work/out.txt"
	if grep -q 'errors: [1-9]' "$work/out.txt" || ! grep -q 'statuses: map\[200:' "$work/out.txt"; then
		echo "GET $1 did not answer 200 throughout:" >&2
		cat "$work/out.txt" >&2
		exit 1
	fi
	awk '/^requests\/s:/ {print $2}' "$work/out.txt"
}

manifest="/registries/@scale0/group-0/lint-0/1.0.0"
declare -A paths=(
	[search]="/search?q=lint"
	[home]="/"
	[listing]="/namespaces/@scale0/registries"
	[namespaces]="/namespaces"
)
base_rps=$(rate "$manifest")
printf '%s registries x %s versions in %s namespaces (%s); start until healthy %d ms; first search %d ms (index from snapshot: %s)\n' \
	"$n" "$VERSIONS" "$NAMESPACES" "$([[ -n "$S3" ]] && echo versitygw || echo disk)" "$start_ms" "$index_ms" "$snapshot"
printf '%-12s %10s %8s\n' route "req/s" ratio
printf '%-12s %10.0f %8s\n' manifest "$base_rps" 1
for name in search home listing namespaces; do
	r=$(rate "${paths[$name]}")
	printf '%-12s %10.0f %8.4f\n' "$name" "$r" "$(awk -v a="$r" -v b="$base_rps" 'BEGIN{print a/b}')"
done
printf 'peak RSS %s\n' "$(awk '/^VmHWM/ {printf "%.1f MB", $2/1024}' "/proc/$server_pid/status")"
