package registry

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Limits of [ParseRange]: the longest range and the most "||" alternatives
// it reads. Real ranges are a few dozen bytes; the limits bound the work a
// hostile package.json or registry can ask for.
const (
	maxRangeLen    = 512
	maxRangeGroups = 32
)

// rangeSpace is the white space that may stand between comparators.
const rangeSpace = " \t\n\f\r"

// Range is an npm-style version range, as package.json dependencies and
// engines write it: alternatives joined by "||", each a set of
// comparators that must all hold, separated by spaces or commas.
//
// A comparator is an operator (none, =, !=, >, >=, =>, <, <=, =<, ~, ~>
// or ^) and a version that may leave parts out or write them as x, X or *
// ("1", "1.2.x", "*"), with an optional leading "v", pre-release and build
// metadata. "A - B" is the range from A to B, both included.
//
// A pre-release version is in a range only when an alternative it is
// tested against names a pre-release itself.
type Range struct {
	alts [][]comparator
	// pre[i] reports whether a comparator of alts[i] names a pre-release.
	pre []bool
}

// comparator is one operator and its version. The version's left-out or
// wildcard parts read as 0; minorX and patchX record which were.
type comparator struct {
	op     string
	v      semVersion
	anyX   bool // some part is left out or a wildcard
	minorX bool // the minor part (and so the patch) is
	patchX bool // only the patch part is
}

// ParseRange parses an npm-style version range ([Range]). The error says
// which part is not a comparator.
func ParseRange(s string) (Range, error) {
	if len(s) > maxRangeLen {
		return Range{}, fmt.Errorf("version range is longer than %d bytes", maxRangeLen)
	}
	alts := strings.Split(s, "||")
	if len(alts) > maxRangeGroups {
		return Range{}, fmt.Errorf("version range has more than %d alternatives", maxRangeGroups)
	}
	r := Range{alts: make([][]comparator, len(alts)), pre: make([]bool, len(alts))}
	for i, alt := range alts {
		cs, err := parseAlternative(alt)
		if err != nil {
			return Range{}, err
		}
		for _, c := range cs {
			if c.v.pre != nil {
				r.pre[i] = true
			}
		}
		r.alts[i] = cs
	}
	return r, nil
}

// Allows reports whether version, a full SemVer version ([ValidVersion]),
// is in the range. It is false for a string that is not one.
func (r Range) Allows(version string) bool {
	v, ok := parseVersion(version)
	return ok && r.allows(v)
}

func (r Range) allows(v semVersion) bool {
	for i, alt := range r.alts {
		if v.pre != nil && !r.pre[i] {
			continue
		}
		all := true
		for _, c := range alt {
			if !c.allows(v) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

var errEmptyRange = errors.New("version range has an empty alternative")

// parseAlternative parses what stands between two "||": a hyphen range
// "A - B", or comparators separated by spaces or by one comma.
func parseAlternative(alt string) ([]comparator, error) {
	if lo, hi, ok := strings.Cut(alt, " - "); ok {
		a, errA := parseComparator(">=", strings.Trim(lo, rangeSpace))
		b, errB := parseComparator("<=", strings.Trim(hi, rangeSpace))
		if err := errors.Join(errA, errB); err != nil {
			return nil, fmt.Errorf("%q is not a hyphen range A - B: %w", strings.Trim(alt, rangeSpace), err)
		}
		return []comparator{a, b}, nil
	}
	var out []comparator
	rest := strings.Trim(alt, rangeSpace)
	if rest == "" {
		return nil, errEmptyRange
	}
	for rest != "" {
		op := rangeOperator(rest)
		rest = strings.TrimLeft(rest[len(op):], rangeSpace)
		end := strings.IndexAny(rest, rangeSpace+",")
		if end < 0 {
			end = len(rest)
		}
		c, err := parseComparator(op, rest[:end])
		if err != nil {
			return nil, err
		}
		out = append(out, c)
		rest = strings.TrimLeft(rest[end:], rangeSpace)
		if sep, ok := strings.CutPrefix(rest, ","); ok {
			rest = strings.TrimLeft(sep, rangeSpace)
			if rest == "" {
				return nil, fmt.Errorf("%q ends with a comma", strings.Trim(alt, rangeSpace))
			}
		}
	}
	return out, nil
}

// rangeOperator returns the operator s starts with, longest first.
func rangeOperator(s string) string {
	for _, op := range []string{"!=", ">=", "=>", "<=", "=<", "~>", "=", ">", "<", "~", "^"} {
		if strings.HasPrefix(s, op) {
			return op
		}
	}
	return ""
}

// parseComparator parses the version of one comparator: up to three dot
// separated parts, each a number or x, X, *, then "-pre" and "+build".
func parseComparator(op, s string) (comparator, error) {
	bad := func() (comparator, error) {
		return comparator{}, fmt.Errorf("%q is not a version range comparator (e.g. ^1.2.0, >=2, 1.x)", op+s)
	}
	core := strings.TrimPrefix(s, "v")
	core, build, hasBuild := strings.Cut(core, "+")
	if hasBuild && !validIdentifiers(build, false) {
		return bad()
	}
	core, pre, hasPre := strings.Cut(core, "-")
	if hasPre && !validIdentifiers(pre, true) {
		return bad()
	}
	parts := strings.Split(core, ".")
	if len(parts) > 3 {
		return bad()
	}
	c := comparator{op: op}
	for _, part := range parts {
		if !isWildcard(part) && !isNumber(part) {
			return bad()
		}
	}
	for i := range 3 {
		if i >= len(parts) || isWildcard(parts[i]) {
			c.anyX = true
			c.minorX = i == 1
			c.patchX = i == 2
			for ; i < 3; i++ {
				c.v.nums[i] = "0"
			}
			break
		}
		n := parts[i]
		if len(n) > 19 {
			return bad()
		}
		c.v.nums[i] = n
	}
	if hasPre {
		c.v.pre = strings.Split(pre, ".")
	}
	return c, nil
}

func isWildcard(s string) bool { return s == "x" || s == "X" || s == "*" }

// isNumber reports whether s is a SemVer number: digits without a leading
// zero.
func isNumber(s string) bool { return isDigits(s) && (s == "0" || s[0] != '0') }

// validIdentifiers reports whether s is dot-separated non-empty runs of
// [0-9A-Za-z-], as pre-release and build metadata are; a numeric
// pre-release identifier has no leading zero.
func validIdentifiers(s string, pre bool) bool {
	for id := range strings.SplitSeq(s, ".") {
		if id == "" || pre && isDigits(id) && !isNumber(id) {
			return false
		}
		for i := 0; i < len(id); i++ {
			b := id[i]
			if !('0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || b == '-') {
				return false
			}
		}
	}
	return true
}

// allows reports whether v satisfies the comparator. Left-out parts widen
// it as npm does: "1.2" and "=1.2" are 1.2.x, "<=1.2" is below 1.3.0,
// ">1.2" is from 1.3.0, "~1" is 1.x and "^0.x" is 0.x.
func (c comparator) allows(v semVersion) bool {
	same := func(i int) bool { return v.nums[i] == c.v.nums[i] }
	switch c.op {
	case "", "=":
		if c.anyX {
			return c.tilde(v)
		}
		return v.compare(c.v) == 0
	case "!=":
		switch {
		case !c.anyX:
			return v.compare(c.v) != 0
		case !same(0):
			return true
		case c.minorX:
			return false
		case !same(1) || !c.patchX && !same(2):
			return true
		case c.patchX:
			return comparePre(v.pre, c.v.pre) != 0
		}
		return v.compare(c.v) != 0
	case ">":
		if !c.anyX {
			return v.compare(c.v) > 0
		}
		switch cmp := compareNumbers(v.nums[0], c.v.nums[0]); {
		case cmp != 0:
			return cmp > 0
		case c.minorX:
			return false
		case c.patchX:
			return compareNumbers(v.nums[1], c.v.nums[1]) > 0
		}
		return v.compare(c.v) > 0
	case "<":
		return v.compare(c.v) < 0
	case ">=", "=>":
		return v.compare(c.v) >= 0
	case "<=", "=<":
		if !c.anyX {
			return v.compare(c.v) <= 0
		}
		switch cmp := compareNumbers(v.nums[0], c.v.nums[0]); {
		case cmp > 0:
			return false
		case cmp == 0 && !c.minorX && compareNumbers(v.nums[1], c.v.nums[1]) > 0:
			return false
		}
		return true
	case "~", "~>":
		return c.tilde(v)
	case "^":
		return c.caret(v)
	}
	return false
}

// tilde: from the version up to the next minor ("~1.2.3"), or the next
// major when the minor is left out ("~1"); "~0.0.0" allows everything.
func (c comparator) tilde(v semVersion) bool {
	if v.compare(c.v) < 0 {
		return false
	}
	if c.v.isZero(0) && c.v.isZero(1) && c.v.isZero(2) && !c.minorX && !c.patchX {
		return true
	}
	return v.nums[0] == c.v.nums[0] && (c.minorX || v.nums[1] == c.v.nums[1])
}

// caret: from the version up to the next change of its left-most non-zero
// part ("^1.2.3" below 2.0.0, "^0.2.3" below 0.3.0, "^0.0.3" below 0.0.4).
func (c comparator) caret(v semVersion) bool {
	if v.compare(c.v) < 0 {
		return false
	}
	if !c.v.isZero(0) || c.minorX {
		return v.nums[0] == c.v.nums[0]
	}
	if !v.isZero(0) {
		return false
	}
	if !c.v.isZero(1) || c.patchX {
		return v.nums[1] == c.v.nums[1]
	}
	if !v.isZero(1) {
		return false
	}
	return v.nums[2] == c.v.nums[2]
}

// numbers returns the comparator's major, minor and patch numbers (a
// left-out or wildcard part is 0). [ParseRange] keeps each to 19 digits,
// so they fit (with one added) in a uint64.
func (c comparator) numbers() (ma, mi, pa uint64) {
	n := func(s string) uint64 {
		v, _ := strconv.ParseUint(s, 10, 64)
		return v
	}
	return n(c.v.nums[0]), n(c.v.nums[1]), n(c.v.nums[2])
}

// lowerBound returns the lowest release c allows, and false when c bounds
// versions only from above ("<2", "<=1.4") or not at all ("!=1.2.3").
func (c comparator) lowerBound() (semVersion, bool) {
	ma, mi, pa := c.numbers()
	switch c.op {
	case "<", "<=", "=<", "!=":
		return semVersion{}, false
	case ">":
		switch {
		case c.anyX && c.minorX:
			return release(ma+1, 0, 0), true
		case c.anyX && c.patchX:
			return release(ma, mi+1, 0), true
		}
		return release(ma, mi, pa+1), true
	}
	return release(ma, mi, pa), true
}
