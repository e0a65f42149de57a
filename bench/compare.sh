#!/usr/bin/env bash
# Side-by-side benchmark of jig-server against a static baseline, in one
# invocation on one machine.
#
# Each jig-server binary runs as in production: fresh disk storage seeded
# with the starter catalog, an auth.json (public @main, a token-gated
# @private), TRUST_PROXY=true, NODE_ENV=production and LOG_LEVEL=info (one
# JSON log line per request, to a file), the default rate limit, metrics
# and encoding negotiation. bench/baseline serves the same paths with the
# same bytes, copied from the first jig-server, with no middleware.
#
# wrk sends mixed reads (latest manifests, versioned manifests, template
# files; a random X-Forwarded-For per request) to the baseline and to each
# server in turn, first with "Accept-Encoding: br, gzip", then with none
# (identity), REPEAT times. It prints each server's median requests/s, its
# ratio to the baseline's median, the median of its per-round ratios
# ("paired": each run divided by the baseline run just before it, which a
# machine whose speed drifts between rounds moves less), and its peak RSS
# (VmHWM) after the load.
# It also prints the CPU time each server spent per request (utime+stime
# from /proc over each wrk run) and the baseline's CPU per request divided
# by the server's: on a machine other work keeps busy, that efficiency
# ratio moves much less than req/s does. The load average is printed at
# the start and the end. Dirty pages (the servers' request logs) are
# written back to disk before each wrk run, so one run's log is not
# written during another's.
#
# With jig binaries (JIGS), it also times "jig init -t @presets/node --ci"
# against the last server, INITS times each, and prints the median.
#
# Usage: bench/compare.sh [label=/path/to/jig-server ...]
#   No argument (or a path "build") builds ./cmd/jig-server from this tree.
#   Example, before and after a change:
#     git stash; go build -o /tmp/jig-server-before ./cmd/jig-server; git stash pop
#     bench/compare.sh before=/tmp/jig-server-before after=build
# Environment:
#   DURATION=10s   length of each wrk run
#   CONNS=64       wrk connections
#   THREADS=1      wrk threads
#   REPEAT=2       rounds (each round runs every target once per encoding)
#   JIGS="before=/tmp/jig-before after=build"   jig binaries to time
#   INITS=10       jig init runs per jig binary
# Everything listens on 127.0.0.1 only; everything started is stopped on exit.
set -euo pipefail

DURATION=${DURATION:-10s}
CONNS=${CONNS:-64}
THREADS=${THREADS:-1}
REPEAT=${REPEAT:-2}
INITS=${INITS:-10}
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install -y wrk)" >&2; exit 1; }

echo "building bench tools..."
(cd "$root" && go build -o "$work/loadgen" ./bench/loadgen && go build -o "$work/baseline" ./bench/baseline)
built=""
build_server() {
	if [[ -z "$built" ]]; then
		echo "building jig-server from $root..."
		(cd "$root" && go build -o "$work/jig-server-build" ./cmd/jig-server)
		built="$work/jig-server-build"
	fi
	echo "$built"
}
built_jig=""
build_jig() {
	if [[ -z "$built_jig" ]]; then
		echo "building jig from $root as the release archives are built..." >&2
		make -s -C "$root" build BIN="$work/release/" >&2
		built_jig="$work/release/jig"
	fi
	echo "$built_jig"
}

labels=()
bins=()
if [[ $# -eq 0 ]]; then set -- current=build; fi
for arg in "$@"; do
	label=${arg%%=*}
	bin=${arg#*=}
	[[ "$label" == "$arg" ]] && label=$(basename "$bin")
	if [[ "$bin" == build ]]; then
		build_server >/dev/null
		bin=$built
	fi
	[[ -x "$bin" ]] || { echo "$bin is not an executable" >&2; exit 1; }
	labels+=("$label")
	bins+=("$bin")
done

cat >"$work/auth.json" <<'JSON'
{
  "@main": [],
  "@private": [{"token": "bench-private-token", "mark": "bench"}]
}
JSON

ports=()
urls=()
server_pids=()
for i in "${!bins[@]}"; do
	port=$("$work/loadgen" -free-port)
	mkdir -p "$work/data$i"
	(
		cd "$work" # no stray .env is read
		exec env -i PATH="$PATH" HOME="$work" \
			PORT="$port" HOST=127.0.0.1 STORAGE_ROOT="$work/data$i" AUTH_CONFIG_PATH="$work/auth.json" \
			TRUST_PROXY=true NODE_ENV=production LOG_LEVEL=info \
			"${bins[$i]}" >"$work/server$i.log" 2>&1
	) &
	pids+=($!)
	server_pids+=($!)
	ports+=("$port")
	urls+=("http://127.0.0.1:$port")
	if ! "$work/loadgen" -url "${urls[$i]}" -wait 30s; then
		echo "${labels[$i]} did not become healthy; its log:" >&2
		tail -n 50 "$work/server$i.log" >&2
		exit 1
	fi
done

"$work/loadgen" -url "${urls[0]}" -paths-only >"$work/paths.txt"
bport=$("$work/loadgen" -free-port)
"$work/baseline" -copy-from "${urls[0]}" -paths "$work/paths.txt" -listen "127.0.0.1:$bport" >"$work/baseline.log" 2>&1 &
pids+=($!)
baseline_pid=$!
burl="http://127.0.0.1:$bport"
for _ in $(seq 100); do
	grep -q '^baseline:' "$work/baseline.log" 2>/dev/null && break
	sleep 0.1
done
grep -q '^baseline:' "$work/baseline.log" || { cat "$work/baseline.log" >&2; exit 1; }

echo "$(nproc) cores; $(wc -l <"$work/paths.txt") paths; wrk -t$THREADS -c$CONNS -d$DURATION, $REPEAT rounds"
for i in "${!bins[@]}"; do
	echo "  ${labels[$i]}: ${bins[$i]} (pid ${server_pids[$i]}, ${urls[$i]})"
done
echo "  baseline: $burl"

# Warm every target: the first read of each path fills caches.
for u in "$burl" "${urls[@]}"; do
	"$work/loadgen" -url "$u" -paths "$work/paths.txt" -duration 2s -c 8 >/dev/null
done

# cpu_ticks PID prints the user+system CPU time the process has used, in
# clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
clk_tck=$(getconf CLK_TCK)

# run_wrk URL ACCEPT PID prints requests/s and the CPU microseconds PID
# spent per request.
run_wrk() {
	local out t0 t1
	# Each jig-server writes about 30 MB of request log a second; the
	# kernel writes dirty pages back to disk up to 30 s later, on the
	# same cores, so without this the disk writes of one run's log would
	# land in whichever run came next (a baseline run included). sync
	# writes them back before each run, outside the measured window.
	sync
	t0=$(cpu_ticks "$3")
	out=$(wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" -s "$root/bench/load.lua" "$1" -- "$work/paths.txt" "$2")
	t1=$(cpu_ticks "$3")
	if grep -q 'non-2xx/3xx: [1-9]' <<<"$out"; then
		echo "warning: $1 answered errors: $(grep 'non-2xx' <<<"$out")" >&2
	fi
	awk -v dt=$((t1 - t0)) -v hz="$clk_tck" '
		/^requests\/s:/ {rps = $2}
		/ requests in / {n = $1}
		END {printf "%s %.1f\n", rps, (n > 0 ? dt * 1e6 / hz / n : 0)}' <<<"$out"
}

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.0f\n", (a[NR/2]+a[NR/2+1])/2}'; }
medianf() { tr ' ' '\n' | grep . | sort -g | awk -v f="${1:-%.1f}" '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf f "\n", (a[NR/2]+a[NR/2+1])/2}'; }

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A results cpus paired
for round in $(seq "$REPEAT"); do
	for enc in "br, gzip" identity; do
		read -r r c < <(run_wrk "$burl" "$enc" "$baseline_pid")
		br=$r
		results["baseline|$enc"]+="$r "
		cpus["baseline|$enc"]+="$c "
		line="round $round, $enc: baseline $r"
		for i in "${!bins[@]}"; do
			read -r r c < <(run_wrk "${urls[$i]}" "$enc" "${server_pids[$i]}")
			results["$i|$enc"]+="$r "
			cpus["$i|$enc"]+="$c "
			paired["$i|$enc"]+="$(awk -v a="$r" -v b="$br" 'BEGIN {printf "%.3f", a/b}') "
			line+=", ${labels[$i]} $r"
		done
		echo "$line"
	done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
printf '%-12s %-10s %10s %10s %7s %7s %10s %12s %9s\n' target encoding "req/s" baseline ratio paired "peak RSS" "CPU us/req" "CPU ratio"
for enc in "br, gzip" identity; do
	b=$(median <<<"${results["baseline|$enc"]}")
	bc=$(medianf <<<"${cpus["baseline|$enc"]}")
	for i in "${!bins[@]}"; do
		r=$(median <<<"${results["$i|$enc"]}")
		c=$(medianf <<<"${cpus["$i|$enc"]}")
		hwm=$(awk '/^VmHWM:/ {printf "%.1f MB", $2/1024}' "/proc/${server_pids[$i]}/status")
		ratio=$(awk -v a="$r" -v b="$b" 'BEGIN {printf "%.2f", a/b}')
		cratio=$(awk -v a="$c" -v b="$bc" 'BEGIN {if (a > 0) printf "%.2f", b/a; else print "-"}')
		pratio=$(medianf %.3f <<<"${paired["$i|$enc"]}" | awk '{printf "%.2f", $1}')
		printf '%-12s %-10s %10s %10s %7s %7s %10s %12s %9s\n' "${labels[$i]}" "${enc// /}" "$r" "$b" "$ratio" "$pratio" "$hwm" "$c" "$cratio"
	done
	printf '%-12s %-10s %10s %10s %7s %7s %10s %12s %9s\n' baseline "${enc// /}" "$b" "$b" 1.00 1.00 "" "$bc" 1.00
done
for i in "${!bins[@]}"; do
	limited=$(grep -c '"statusCode":429' "$work/server$i.log" || true)
	lines=$(grep -c '"msg":"request completed"' "$work/server$i.log" || true)
	echo "${labels[$i]}: $lines request log lines, $limited rate limited"
done

if [[ -n "${JIGS:-}" ]]; then
	echo
	echo "jig init -t @presets/node --ci against ${labels[-1]} (${urls[-1]}), $INITS runs each:"
	for arg in $JIGS; do
		label=${arg%%=*}
		bin=${arg#*=}
		[[ "$bin" == build ]] && bin=$(build_jig)
		times=""
		for n in $(seq "$INITS"); do
			dir="$work/init-$label-$n"
			mkdir -p "$dir"
			t0=$(date +%s%N)
			(cd "$dir" && env -i PATH="$PATH" HOME="$dir" NO_COLOR=1 JIG_REGISTRY_URL="${urls[-1]}" \
				"$bin" init -t @presets/node -n demo --ci >/dev/null 2>"$dir/err") || { cat "$dir/err" >&2; exit 1; }
			t1=$(date +%s%N)
			times+="$(((t1 - t0) / 1000000)) "
		done
		echo "  $label: median $(median <<<"$times") ms (runs: $times)"
	done
fi
