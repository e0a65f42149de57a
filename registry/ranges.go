package registry

import (
	"strconv"
	"strings"
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
	for _, c := range cons {
		m := c.lowest()
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
	samples := sampleVersions(cons)
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

// sampleVersions returns the releases next to every version the ranges'
// comparators name: each of them, one patch, minor and major above and
// below it, and 0.0.0.
func sampleVersions(rs []Range) []semVersion {
	out := []semVersion{release(0, 0, 0)}
	add := func(ma, mi, pa uint64) {
		out = append(out, release(ma, mi, pa))
	}
	for _, r := range rs {
		for _, alt := range r.alts {
			for _, c := range alt {
				ma, mi, pa := c.numbers()
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
	}
	return out
}

// lowest returns the lowest release the range can match: the minimum over
// its || alternatives of the greatest lower bound among each
// alternative's comparators (pre-releases aside).
func (r Range) lowest() semVersion {
	var best semVersion
	for i, alt := range r.alts {
		lower := release(0, 0, 0)
		for _, c := range alt {
			if v, ok := c.lowerBound(); ok && v.compare(lower) > 0 {
				lower = v
			}
		}
		if i == 0 || lower.compare(best) < 0 {
			best = lower
		}
	}
	return best
}
