#!/usr/bin/env bash
# How long "jig publish" of one version with many files takes against a
# jig-server on loopback with disk storage, for one or more pairs of jig
# and jig-server binaries, in one invocation on one machine.
#
# It writes a registry directory with FILES declared files of SIZE bytes
# each (default 500 files of 2 KiB, about 1 MB; MB=10 spreads 10 MB over
# the files instead), starts each jig-server on 127.0.0.1 with a fresh disk
# storage and a publish token (jig-server token new), and runs
# "jig publish" RUNS times against it, a new version each time (the
# version in registry.json is bumped), in a temporary HOME. It prints each
# run's wall time and the median per pair, and the CPU time the server
# spent on each publish (utime+stime from /proc), which other work on a
# busy machine moves much less than the wall time. Pairs take turns run by
# run, so a machine whose speed drifts moves them alike. Two untimed
# publishes come first: jig publish compares a version with the previous
# one and downloads the previous version's files the first time it sees
# them, so every timed run has a previous version whose files jig's cache
# holds.
#
# Usage: bench/publish.sh [label=/path/to/jig-server,/path/to/jig ...]
#   No argument (or the path "build") builds both from this tree.
#   Example, before and after a change:
#     git worktree add /tmp/before main
#     (cd /tmp/before && go build -o /tmp/jig-server-before ./cmd/jig-server && go build -o /tmp/jig-before ./cmd/jig)
#     bench/publish.sh before=/tmp/jig-server-before,/tmp/jig-before after=build
# Environment:
#   FILES=500    files in the version
#   SIZE=2048    bytes per file (ignored when MB is set)
#   MB=          total megabytes of file content, spread over FILES files
#   RUNS=5       publishes per pair
# Everything listens on 127.0.0.1 only; everything started is stopped on exit.
set -euo pipefail

FILES=${FILES:-500}
SIZE=${SIZE:-2048}
RUNS=${RUNS:-5}
if [[ -n "${MB:-}" ]]; then
	SIZE=$((MB * 1000000 / FILES))
fi
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

echo "building loadgen..." >&2
(cd "$root" && go build -o "$work/loadgen" ./bench/loadgen)
built=""
build() {
	if [[ -z "$built" ]]; then
		echo "building jig-server and jig from $root..." >&2
		(cd "$root" && go build -o "$work/build/" ./cmd/jig-server ./cmd/jig)
		built=yes
	fi
}

labels=()
servers=()
jigs=()
if [[ $# -eq 0 ]]; then set -- current=build; fi
for arg in "$@"; do
	label=${arg%%=*}
	pair=${arg#*=}
	[[ "$label" == "$arg" ]] && label=pair$((${#labels[@]} + 1))
	if [[ "$pair" == build ]]; then
		build
		server="$work/build/jig-server"
		jig="$work/build/jig"
	else
		server=${pair%%,*}
		jig=${pair#*,}
		[[ "$jig" == "$pair" ]] && { echo "$arg: want label=/path/to/jig-server,/path/to/jig" >&2; exit 1; }
	fi
	for b in "$server" "$jig"; do
		[[ -x "$b" ]] || { echo "$b is not an executable" >&2; exit 1; }
	done
	labels+=("$label")
	servers+=("$server")
	jigs+=("$jig")
done

# The registry: FILES files of SIZE random bytes (as text, so gzip does
# not shrink them to nothing), declared in registry.json.
pkg="$work/pkg"
mkdir -p "$pkg/templates"
head -c $((FILES * SIZE * 3 / 4 + 3)) /dev/urandom | base64 -w 0 >"$work/blob"
for i in $(seq 0 $((FILES - 1))); do
	dd if="$work/blob" of="$pkg/templates/f$i.txt" bs="$SIZE" skip="$i" count=1 status=none
done
rm "$work/blob"
# manifest VERSION writes registry.json declaring every file.
manifest() {
	local f
	{
		printf '{"name":"bench","namespace":"@bench","path":"many/bench","type":"registry:feature","version":"%s","priority":4,\n "files":[' "$1"
		for f in $(seq 0 $((FILES - 1))); do
			((f > 0)) && printf ','
			printf '\n  {"target":"many/f%d.txt","type":"registry:docs","path":"templates/f%d.txt"}' "$f" "$f"
		done
		printf ']}\n'
	} >"$pkg/registry.json"
}

urls=()
homes=()
server_pids=()
for i in "${!servers[@]}"; do
	token_out=$("${servers[$i]}" token new --namespace @bench --publish)
	token=$(awk '/^Token/ {print $NF}' <<<"$token_out")
	entry=$(grep '^{"tokenSha256"' <<<"$token_out")
	mkdir -p "$work/data$i" "$work/home$i"
	printf '{"@bench": [%s]}\n' "$entry" >"$work/auth$i.json"
	port=$("$work/loadgen" -free-port)
	(
		cd "$work" # no stray .env is read
		exec env -i PATH="$PATH" HOME="$work/home$i" \
			PORT="$port" HOST=127.0.0.1 STORAGE_ROOT="$work/data$i" AUTH_CONFIG_PATH="$work/auth$i.json" \
			NODE_ENV=production LOG_LEVEL=warn \
			"${servers[$i]}" >"$work/server$i.log" 2>&1
	) &
	pids+=($!)
	server_pids+=($!)
	urls+=("http://127.0.0.1:$port")
	if ! "$work/loadgen" -url "${urls[$i]}" -wait 30s; then
		echo "${labels[$i]} did not become healthy; its log:" >&2
		tail -n 50 "$work/server$i.log" >&2
		exit 1
	fi
	homes+=("$work/home$i")
	env -i PATH="$PATH" HOME="${homes[$i]}" NO_COLOR=1 \
		"${jigs[$i]}" config set @bench --url "${urls[$i]}" --token "$token" >/dev/null
done

# cpu_ms PID prints the user+system CPU time the process has used, in ms.
clk_tck=$(getconf CLK_TCK)
cpu_ms() { awk -v hz="$clk_tck" '{print int(($14 + $15) * 1000 / hz)}' "/proc/$1/stat"; }

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.0f\n", (a[NR/2]+a[NR/2+1])/2}'; }

bytes=$((FILES * SIZE))
echo "$(nproc) cores; $FILES files of $SIZE bytes ($bytes bytes) per version; $RUNS publishes per pair"
for i in "${!servers[@]}"; do
	echo "  ${labels[$i]}: ${servers[$i]} + ${jigs[$i]} (${urls[$i]})"
done
# publish I VERSION publishes the registry as VERSION with pair I.
publish() {
	manifest "$2"
	env -i PATH="$PATH" HOME="${homes[$1]}" NO_COLOR=1 \
		"${jigs[$1]}" publish "$pkg" --ci >"$work/out" 2>&1 || { cat "$work/out" >&2; exit 1; }
}
for i in "${!servers[@]}"; do
	publish "$i" 0.0.1
	publish "$i" 0.0.2
done
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A times cpus
for run in $(seq "$RUNS"); do
	line="run $run:"
	for i in "${!servers[@]}"; do
		# Dirty pages of the previous run are written back outside the
		# measured window.
		sync
		c0=$(cpu_ms "${server_pids[$i]}")
		t0=$(date +%s%N)
		publish "$i" "1.0.$run"
		t1=$(date +%s%N)
		c1=$(cpu_ms "${server_pids[$i]}")
		ms=$(((t1 - t0) / 1000000))
		times[$i]+="$ms "
		cpus[$i]+="$((c1 - c0)) "
		line+=" ${labels[$i]} $ms ms (server CPU $((c1 - c0)) ms)"
	done
	echo "$line"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '%-12s %12s %18s\n' pair "median ms" "server CPU ms"
for i in "${!servers[@]}"; do
	printf '%-12s %12s %18s\n' "${labels[$i]}" "$(median <<<"${times[$i]}")" "$(median <<<"${cpus[$i]}")"
done
