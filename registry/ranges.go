package registry

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// RangeRequest is one registry's request for an npm package version range.
type RangeRequest struct {
	// Range is the npm range as written, e.g. "^1.2.0".
	Range string
	// Priority is the requesting registry's priority; lower wins conflicts.
	Priority int
	// From names the requesting registry (for messages).
	From string
}

// CombineRanges combines the version ranges several registries request for
// one npm package, as the reference tool does:
//
//   - a single request, or identical requests, are kept as they are;
//   - when every request is a valid range and the highest minimum version
//     satisfies all of them, the range contained in all others is used, or
//     else the distinct ranges joined with spaces (an AND, e.g.
//     "^1.0.0 >=1.5.0");
//   - otherwise the request with the lowest Priority wins (the first one on
//     a tie) and conflict is true, so the caller can warn.
//
// With no requests it returns "" and false.
func CombineRanges(reqs ...RangeRequest) (rng string, winner RangeRequest, conflict bool) {
	if len(reqs) == 0 {
		return "", RangeRequest{}, false
	}
	var uniq []string
	seen := map[string]bool{}
	for _, r := range reqs {
		t := strings.TrimSpace(r.Range)
		if !seen[t] {
			seen[t] = true
			uniq = append(uniq, t)
		}
	}
	if len(uniq) == 1 {
		return reqs[0].Range, reqs[0], false
	}
	if r, ok := intersectRanges(uniq); ok {
		return r, RangeRequest{Range: r}, false
	}
	best := reqs[0]
	for _, r := range reqs[1:] {
		if r.Priority < best.Priority {
			best = r
		}
	}
	return best.Range, best, true
}

var rangeVersionRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(\d+)(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(-[0-9A-Za-z.-]+)?`)
})

func intersectRanges(rs []string) (string, bool) {
	cons := make([]Range, len(rs))
	for i, r := range rs {
		c, err := ParseRange(r)
		if err != nil {
			return "", false
		}
		cons[i] = c
	}
	var highest *semVersion
	for _, r := range rs {
		m := minVersion(r)
		if highest == nil || m.compare(*highest) > 0 {
			highest = &m
		}
	}
	for _, c := range cons {
		if !c.allows(*highest) {
			return "", false
		}
	}
	// Boundary versions around every version written in any range; a
	// range contained in all the others on these samples is used.
	samples := sampleVersions(rs)
	for i := range rs {
		subset := true
		for j := range rs {
			if i != j && !containedOn(samples, cons[i], cons[j]) {
				subset = false
				break
			}
		}
		if subset {
			return rs[i], true
		}
	}
	return strings.Join(rs, " "), true
}

func containedOn(samples []semVersion, a, b Range) bool {
	for _, v := range samples {
		if a.allows(v) && !b.allows(v) {
			return false
		}
	}
	return true
}

// release is the version ma.mi.pa.
func release(ma, mi, pa uint64) semVersion {
	f := func(n uint64) string { return strconv.FormatUint(n, 10) }
	return semVersion{nums: [3]string{f(ma), f(mi), f(pa)}}
}

func sampleVersions(rs []string) []semVersion {
	var out []semVersion
	add := func(ma, mi, pa uint64) {
		out = append(out, release(ma, mi, pa))
	}
	add(0, 0, 0)
	for _, r := range rs {
		for _, m := range rangeVersionRE().FindAllStringSubmatch(r, -1) {
			ma, mi, pa := parts(m)
			add(ma, mi, pa)
			add(ma, mi, pa+1)
			add(ma, mi+1, 0)
			add(ma+1, 0, 0)
			if pa > 0 {
				add(ma, mi, pa-1)
			}
			if mi > 0 {
				add(ma, mi-1, 0)
			}
			if ma > 0 {
				add(ma-1, 0, 0)
			}
		}
	}
	return out
}

func parts(m []string) (ma, mi, pa uint64) {
	n := func(s string) uint64 {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0
		}
		return v
	}
	return n(m[1]), n(m[2]), n(m[3])
}

// minVersion returns the lowest version a range can match (without
// pre-releases): the minimum over its || alternatives of the maximum lower
// bound of each alternative's comparators.
func minVersion(r string) semVersion {
	var best semVersion
	for i, alt := range strings.Split(r, "||") {
		alt = strings.TrimSpace(alt)
		lower := release(0, 0, 0)
		if alt != "" && alt != "*" && alt != "x" {
			// Hyphen ranges "a - b": the lower bound is a.
			if i := strings.Index(alt, " - "); i >= 0 {
				alt = alt[:i]
			}
			for _, f := range strings.Fields(alt) {
				op := f[:len(f)-len(strings.TrimLeft(f, "<>=~^"))]
				if strings.HasPrefix(op, "<") {
					continue
				}
				m := rangeVersionRE().FindStringSubmatch(f)
				if m == nil {
					continue
				}
				ma, mi, pa := parts(m)
				v := release(ma, mi, pa)
				if op == ">" {
					v = release(ma, mi, pa+1)
				}
				if v.compare(lower) > 0 {
					lower = v
				}
			}
		}
		if i == 0 || lower.compare(best) < 0 {
			best = lower
		}
	}
	return best
}
