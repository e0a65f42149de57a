// Package suggest holds what jig suggests to a user: the registry they
// probably meant when the one typed does not exist ("did you mean
// @main/quality/eslint?"), and the commands that use a registry or a
// preset ([AddCommand], [InitCommand]), which the CLI, the web catalog and
// jig mcp all show.
package suggest

import (
	"strings"
)

// AddCommand returns the command that adds ref ("@ns/path", optionally
// with "@version" or ":ts") to a project: "jig add <ref>".
func AddCommand(ref string) string { return "jig add " + ref }

// InitCommand returns the command that starts a project from ref (a
// preset or a registry): "jig init -t <ref>".
func InitCommand(ref string) string { return "jig init -t " + ref }

// Registry returns the key among keys ("@ns/path") that want (a key too)
// most probably misspells, or "" when none is near. The same path in
// another namespace wins; otherwise the key at the smallest edit distance,
// if that distance is at most a third of want's path length (at least 1,
// at most 3). Ties go to the earlier key.
func Registry(want string, keys []string) string {
	wantNS, wantPath := split(want)
	for _, k := range keys {
		if ns, p := split(k); p == wantPath && ns != wantNS {
			return k
		}
	}
	limit := min(max(len(wantPath)/3, 1), 3)
	best, bestD := "", limit+1
	for _, k := range keys {
		if k == want {
			continue
		}
		ns, p := split(k)
		d := distance(wantPath, p, bestD)
		if ns != wantNS {
			d += distance(wantNS, ns, bestD)
		}
		if d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// split cuts "@ns/path" into "@ns" and "path"; a key without a namespace
// is all path.
func split(key string) (string, string) {
	if !strings.HasPrefix(key, "@") {
		return "", key
	}
	ns, path, ok := strings.Cut(key, "/")
	if !ok {
		return key, ""
	}
	return ns, path
}

// distance is the Levenshtein distance of a and b (bytes), or a value
// above limit as soon as it is known to exceed limit.
func distance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
