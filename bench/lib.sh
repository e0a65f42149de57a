# Shared by the bench scripts (source it): $root is the repository, $work
# a temporary folder removed on exit, and every process whose pid is
# appended to pids is stopped on exit.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
pids=()

cleanup() {
	for p in "${pids[@]}"; do
		if kill -0 "$p" 2>/dev/null; then
			kill -TERM "$p" 2>/dev/null || true
			wait "$p" 2>/dev/null || true
		fi
	done
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
