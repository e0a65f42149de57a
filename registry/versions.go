package registry

import (
	"cmp"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
)

// VersionList is the document stored as versions.json and served at
// .../versions: every published version, newest first.
type VersionList wire.VersionList

// ParseVersionList decodes a versions.json document and checks every entry
// is a full SemVer version.
func ParseVersionList(data []byte) (*VersionList, error) {
	if err := CheckJSONDepth(layout.VersionsFile, data); err != nil {
		return nil, err
	}
	var vl VersionList
	if err := json.Unmarshal(data, &vl); err != nil {
		return nil, fmt.Errorf("versions.json is not valid JSON: %w", err)
	}
	for _, v := range vl.Versions {
		if !ValidVersion(v) {
			return nil, fmt.Errorf("versions.json: %q is not a SemVer version", v)
		}
	}
	return &vl, nil
}

// Latest returns the first (newest) version, or "" when there is none.
func (vl *VersionList) Latest() string {
	if vl == nil || len(vl.Versions) == 0 {
		return ""
	}
	return vl.Versions[0]
}

// Add inserts v (if absent) and sorts the list newest first by SemVer
// precedence. It reports whether v was added.
func (vl *VersionList) Add(v string) bool {
	for _, x := range vl.Versions {
		if x == v {
			return false
		}
	}
	vl.Versions = append(vl.Versions, v)
	SortVersions(vl.Versions)
	return true
}

// Marshal encodes the list as the reference does: two-space indentation and
// a trailing newline.
func (vl *VersionList) Marshal() ([]byte, error) {
	if vl.Versions == nil {
		vl.Versions = []string{}
	}
	b, err := json.MarshalIndent(vl, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// SortVersions sorts SemVer strings newest first ([CompareVersions]).
// Strings that are not versions ([ValidVersion]) sort last, in their
// original order.
func SortVersions(vs []string) {
	parsed := make(map[string]semVersion, len(vs))
	for _, v := range vs {
		if sv, ok := parseVersion(v); ok {
			parsed[v] = sv
		}
	}
	sort.SliceStable(vs, func(i, j int) bool {
		a, okA := parsed[vs[i]]
		b, okB := parsed[vs[j]]
		switch {
		case !okA:
			return false
		case !okB:
			return true
		}
		return a.compare(b) > 0
	})
}

// CompareVersions compares two versions by SemVer 2.0 precedence: -1 when
// a is older than b, +1 when newer, 0 when they have the same precedence
// (build metadata is ignored). Numbers of any length compare correctly.
// A string [ValidVersion] refuses is older than every version; two such
// strings compare equal.
func CompareVersions(a, b string) int {
	va, okA := parseVersion(a)
	vb, okB := parseVersion(b)
	switch {
	case !okA && !okB:
		return 0
	case !okA:
		return -1
	case !okB:
		return 1
	}
	return va.compare(vb)
}

// semVersion is a version [ValidVersion] accepts, split into what its
// precedence depends on (SemVer 2.0 section 11).
type semVersion struct {
	// nums are the major, minor and patch numbers: decimal digits
	// without leading zeros, of any length.
	nums [3]string
	// pre are the pre-release identifiers; nil for a release.
	pre []string
}

// parseVersion splits v when [ValidVersion] accepts it: the grammar is
// checked in one place, and this only cuts at the separators it allows.
func parseVersion(v string) (semVersion, bool) {
	if !ValidVersion(v) {
		return semVersion{}, false
	}
	v, _, _ = strings.Cut(v, "+")
	core, pre, hasPre := strings.Cut(v, "-")
	var sv semVersion
	copy(sv.nums[:], strings.SplitN(core, ".", 3))
	if hasPre {
		sv.pre = strings.Split(pre, ".")
	}
	return sv, true
}

func (a semVersion) compare(b semVersion) int {
	for i := range a.nums {
		if c := compareNumbers(a.nums[i], b.nums[i]); c != 0 {
			return c
		}
	}
	return comparePre(a.pre, b.pre)
}

// comparePre compares pre-release identifiers by SemVer 2.0 precedence;
// nil is a release, newer than any of its pre-releases.
func comparePre(a, b []string) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		xNum, yNum := isDigits(x), isDigits(y)
		var c int
		switch {
		case xNum && yNum:
			c = compareNumbers(x, y)
		case xNum:
			c = -1 // numeric identifiers are older than alphanumeric ones
		case yNum:
			c = 1
		default:
			c = strings.Compare(x, y)
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// isZero reports whether number i (0 major, 1 minor, 2 patch) is 0.
func (a semVersion) isZero(i int) bool { return a.nums[i] == "0" }

// compareNumbers compares decimal numbers without leading zeros.
func compareNumbers(a, b string) int {
	if len(a) != len(b) {
		return cmp.Compare(len(a), len(b))
	}
	return strings.Compare(a, b)
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// VersionKey returns a string whose byte order is the precedence order of
// versions: for versions a and b that [ValidVersion] accepts,
// strings.Compare(VersionKey(a), VersionKey(b)) is CompareVersions(a, b)
// (build metadata is ignored, as in precedence). A database sorts by it
// where it cannot call CompareVersions. It holds bytes below ' ', never
// 0, so that any text column keeps it; it is "" for an invalid version.
func VersionKey(v string) string {
	sv, ok := parseVersion(v)
	if !ok {
		return ""
	}
	var b strings.Builder
	for _, n := range sv.nums {
		numberKey(&b, n)
	}
	if sv.pre == nil {
		b.WriteByte(keyRelease) // a release is newer than its pre-releases
		return b.String()
	}
	b.WriteByte(keyPre)
	for _, id := range sv.pre {
		if isDigits(id) {
			b.WriteByte(keyNumeric) // numeric identifiers are older
			numberKey(&b, id)
			continue
		}
		b.WriteByte(keyAlpha)
		b.WriteString(id)
		b.WriteByte(keyEnd) // "ab" is older than "abc"
	}
	return b.String()
}

// The marks of [VersionKey], in their order.
const (
	keyEnd = 1 + iota
	keyNumeric
	keyAlpha
	keyPre
	keyRelease
)

// numberKey writes n (decimal digits, no leading zero) so that longer
// numbers sort after shorter ones: the count of digits of its length,
// its length, then its digits.
func numberKey(b *strings.Builder, n string) {
	l := strconv.Itoa(len(n))
	b.WriteByte(byte('0' + len(l)))
	b.WriteString(l)
	b.WriteString(n)
}
