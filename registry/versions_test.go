package registry

import (
	"slices"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
)

// versionCases are what the wire accepts as a version (routes, uploads,
// versions.json, identifiers): the SemVer 2.0 grammar, as the reference's
// route regex accepts it, including numbers too large for 64 bits.
var versionCases = []struct {
	v    string
	want bool
}{
	{"0.0.0", true},
	{"1.0.0", true},
	{"10.20.30", true},
	{"1.0.0-alpha", true},
	{"1.0.0-alpha.1", true},
	{"1.0.0-0.3.7", true},
	{"1.0.0-x.7.z.92", true},
	{"1.0.0-x-y-z.--", true},
	{"1.0.0-alpha+001", true},
	{"1.0.0+20130313144700", true},
	{"1.0.0-beta+exp.sha.5114f85", true},
	{"1.0.0+21AF26D3----117B344092BD", true},
	{"1.0.0-0A.is.legal", true},
	{"1.0.0-01a", true},
	{"99999999999999999999999.999999999999999999.99999999999999999", true},
	{"1.0.0-" + strings.Repeat("a", 300), true},
	{"", false},
	{"1", false},
	{"1.2", false},
	{"1.2.3.4", false},
	{"v1.2.3", false},
	{"01.1.1", false},
	{"1.01.1", false},
	{"1.1.01", false},
	{"1.0.0-01", false},
	{"1.0.0-", false},
	{"1.0.0+", false},
	{"1.0.0-alpha..1", false},
	{"1.0.0-alpha_beta", false},
	{"1.0.0+a+b", false},
	{"1.0.0 ", false},
	{" 1.0.0", false},
	{"^1.0.0", false},
	{"1.x.0", false},
	{"latest", false},
	{"1.0.0\n", false},
	{"１.0.0", false},
}

// TestValidVersion pins the versions the wire accepts and refuses: the one
// validator ([ValidVersion]) and the ordering ([CompareVersions]) agree on
// every one of them.
func TestValidVersion(t *testing.T) {
	t.Parallel()
	for _, tt := range versionCases {
		if got := ValidVersion(tt.v); got != tt.want {
			t.Errorf("ValidVersion(%q) = %v, want %v", tt.v, got, tt.want)
		}
		if _, got := parseVersion(tt.v); got != tt.want {
			t.Errorf("parseVersion(%q) ok = %v, want %v (the validator's answer)", tt.v, got, tt.want)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	t.Parallel()
	// The SemVer 2.0 specification's example, oldest first, then larger
	// numbers than 64 bits hold.
	ordered := []string{
		"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
		"1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.2.0", "1.10.0", "2.0.0",
		"18446744073709551615.0.0", "18446744073709551616.0.0", "99999999999999999999999.0.0",
	}
	for i, a := range ordered {
		for j, b := range ordered {
			if got, want := CompareVersions(a, b), cmpInts(i, j); got != want {
				t.Errorf("CompareVersions(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"1.0.0+build.1", "1.0.0+build.2", 0},
		{"1.0.0", "not-a-version", 1},
		{"not-a-version", "1.0.0", -1},
		{"x", "y", 0},
	} {
		if got := CompareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
	vs := []string{"1.0.0", "bogus", "2.0.0-rc.1", "10.0.0", "2.0.0", "1.0.0-alpha"}
	SortVersions(vs)
	if want := []string{"10.0.0", "2.0.0", "2.0.0-rc.1", "1.0.0", "1.0.0-alpha", "bogus"}; !slices.Equal(vs, want) {
		t.Errorf("SortVersions = %q, want %q", vs, want)
	}
}

func cmpInts(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// FuzzCompareVersions checks the one validator and the ordering against
// Masterminds/semver, which the ordering replaced: wherever it parses both
// versions strictly, the precedence is the same; it accepts nothing the
// validator refuses; and the ordering is antisymmetric.
func FuzzCompareVersions(f *testing.F) {
	for _, tt := range versionCases {
		f.Add(tt.v, "1.0.0-alpha.1")
	}
	f.Add("1.0.0-rc.1", "1.0.0-rc.1+b")
	f.Add("0.0.1-0", "0.0.1-a")
	f.Fuzz(func(t *testing.T, a, b string) {
		sa, errA := semver.StrictNewVersion(a)
		sb, errB := semver.StrictNewVersion(b)
		if errA == nil && !ValidVersion(a) {
			t.Errorf("semver.StrictNewVersion accepts %q, ValidVersion refuses it", a)
		}
		if errA == nil && errB == nil {
			if got, want := CompareVersions(a, b), sa.Compare(sb); got != want {
				t.Errorf("CompareVersions(%q, %q) = %d, semver's Compare = %d", a, b, got, want)
			}
		}
		if CompareVersions(a, b) != -CompareVersions(b, a) {
			t.Errorf("CompareVersions(%q, %q) = %d but reversed %d", a, b, CompareVersions(a, b), CompareVersions(b, a))
		}
	})
}

// TestVersionKey checks that the keys of the specification's ordering,
// and of every pair of it, sort as the versions do.
func TestVersionKey(t *testing.T) {
	t.Parallel()
	ordered := []string{
		"0.0.0-0", "0.0.0-1", "0.0.0-9", "0.0.0-10", "0.0.0-a", "0.0.0-a.0", "0.0.0-a-", "0.0.0-ab", "0.0.0",
		"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
		"1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.2.0", "1.10.0", "2.0.0",
		"18446744073709551615.0.0", "18446744073709551616.0.0", "99999999999999999999999.0.0",
	}
	for i, a := range ordered {
		for j, b := range ordered {
			if got, want := strings.Compare(VersionKey(a), VersionKey(b)), cmpInts(i, j); got != want {
				t.Errorf("Compare(VersionKey(%q), VersionKey(%q)) = %d, want %d", a, b, got, want)
			}
		}
	}
	for _, v := range []string{"", "1.0", "v1.0.0", "01.0.0"} {
		if k := VersionKey(v); k != "" {
			t.Errorf("VersionKey(%q) = %q, want \"\"", v, k)
		}
	}
	if a, b := VersionKey("1.0.0+a"), VersionKey("1.0.0+b"); a != b {
		t.Errorf("VersionKey ignores no build metadata: %q, %q", a, b)
	}
}

// FuzzVersionKey checks that the keys of any two valid versions sort as
// CompareVersions orders them, and that a key holds no NUL byte.
func FuzzVersionKey(f *testing.F) {
	for _, tt := range versionCases {
		f.Add(tt.v, "1.0.0-alpha.1")
	}
	f.Add("1.0.0-a.1", "1.0.0-a-1")
	f.Add("1.0.0-9", "1.0.0-10")
	f.Fuzz(func(t *testing.T, a, b string) {
		if !ValidVersion(a) || !ValidVersion(b) {
			return
		}
		ka, kb := VersionKey(a), VersionKey(b)
		if got, want := strings.Compare(ka, kb), CompareVersions(a, b); got != want {
			t.Errorf("Compare(VersionKey(%q), VersionKey(%q)) = %d, CompareVersions = %d", a, b, got, want)
		}
		if strings.IndexByte(ka, 0) >= 0 {
			t.Errorf("VersionKey(%q) = %q holds a NUL byte", a, ka)
		}
	})
}
