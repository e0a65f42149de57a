package registry

import (
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
)

func TestRangeAllows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rng      string
		in, out  []string
		parseErr bool
	}{
		{rng: "^1.2.3", in: []string{"1.2.3", "1.9.0"}, out: []string{"1.2.2", "2.0.0", "1.3.0-rc.1"}},
		{rng: "^0.2.3", in: []string{"0.2.3", "0.2.9"}, out: []string{"0.3.0", "1.0.0"}},
		{rng: "^0.0.3", in: []string{"0.0.3"}, out: []string{"0.0.4", "0.1.0"}},
		{rng: "^0.x", in: []string{"0.0.1", "0.9.0"}, out: []string{"1.0.0"}},
		{rng: "~1.2.3", in: []string{"1.2.3", "1.2.9"}, out: []string{"1.3.0"}},
		{rng: "~1", in: []string{"1.0.0", "1.9.9"}, out: []string{"2.0.0"}},
		{rng: "1.2.x", in: []string{"1.2.0", "1.2.7"}, out: []string{"1.3.0", "1.1.9"}},
		{rng: "*", in: []string{"0.0.0", "99.0.0"}, out: []string{"1.0.0-beta"}},
		{rng: ">=1.2.0 <2", in: []string{"1.2.0", "1.99.0"}, out: []string{"2.0.0", "1.1.0"}},
		{rng: ">= 1.2.0, < 2", in: []string{"1.5.0"}, out: []string{"2.0.0"}},
		{rng: ">1.2", in: []string{"1.3.0"}, out: []string{"1.2.9"}},
		{rng: "<=1.2", in: []string{"1.2.9"}, out: []string{"1.3.0"}},
		{rng: "1.2 - 1.4", in: []string{"1.2.0", "1.4.9"}, out: []string{"1.5.0", "1.1.0"}},
		{rng: "^1.0.0 || ^3.0.0", in: []string{"1.1.0", "3.2.0"}, out: []string{"2.0.0"}},
		{rng: ">=1.0.0-beta.2 <2", in: []string{"1.0.0-beta.10", "1.0.0"}, out: []string{"1.0.0-beta.1"}},
		{rng: "!=1.2.3", in: []string{"1.2.4"}, out: []string{"1.2.3"}},
		{rng: "v1.2.3", in: []string{"1.2.3", "1.2.3+build.5"}, out: []string{"1.2.4"}},
		{rng: "latest", parseErr: true},
		{rng: "", parseErr: true},
		{rng: "^1.0.0 ||", parseErr: true},
		{rng: "01.2.3", parseErr: true},
		{rng: "1.2.3.4", parseErr: true},
		{rng: ">=1.2.3<2", parseErr: true},
		{rng: "^1.0.0,", parseErr: true},
		{rng: "1.2.3-", parseErr: true},
		{rng: "X.", parseErr: true},
		{rng: "1.x.", parseErr: true},
		{rng: "1.x.3", in: []string{"1.0.0", "1.9.0"}, out: []string{"2.0.0"}},
		{rng: strings.Repeat("1 || ", 40) + "1", parseErr: true},
		{rng: strings.Repeat(" ", maxRangeLen) + "1", parseErr: true},
	}
	for _, tt := range tests {
		r, err := ParseRange(tt.rng)
		if (err != nil) != tt.parseErr {
			t.Errorf("ParseRange(%q) error = %v, want error %v", tt.rng, err, tt.parseErr)
			continue
		}
		for _, v := range tt.in {
			if !r.Allows(v) {
				t.Errorf("ParseRange(%q).Allows(%q) = false, want true", tt.rng, v)
			}
		}
		for _, v := range tt.out {
			if r.Allows(v) {
				t.Errorf("ParseRange(%q).Allows(%q) = true, want false", tt.rng, v)
			}
		}
	}
}

// rangeOperators and rangeVersions generate the ranges that package.json
// files write, to compare with Masterminds/semver, which ParseRange
// replaced.
var (
	rangeOperators = []string{"", "=", "!=", ">", ">=", "=>", "<", "<=", "=<", "~", "~>", "^", ">= "}
	rangeVersions  = []string{"0", "1", "0.0", "0.2", "1.2", "1.x", "1.2.x", "1.X", "*", "x", "1.*.*",
		"0.0.0", "0.0.3", "0.2.3", "1.0.0", "1.2.3", "2.0.0", "v1.2.3", "1.2.3-beta.2", "1.2.3+build", "0.x"}
	rangeProbes = []string{"0.0.0", "0.0.3", "0.0.4", "0.1.0", "0.2.3", "0.2.4", "0.3.0", "1.0.0", "1.2.2", "1.2.3",
		"1.2.4", "1.3.0", "1.9.9", "2.0.0", "3.0.0", "1.2.3-beta.1", "1.2.3-beta.2", "1.2.3-beta.10", "1.2.3-alpha", "2.0.0-rc.1"}
)

// TestRangeAgreesWithSemverLibrary: every operator with every version, and
// pairs of them joined by a space, "||" or a hyphen, parse in both and
// allow the same versions.
func TestRangeAgreesWithSemverLibrary(t *testing.T) {
	t.Parallel()
	var ranges []string
	for _, op := range rangeOperators {
		for _, v := range rangeVersions {
			ranges = append(ranges, op+v)
		}
	}
	single := len(ranges)
	for i := 0; i < single; i += 3 {
		j := (i*7 + 5) % single
		ranges = append(ranges, ranges[i]+" "+ranges[j], ranges[i]+" || "+ranges[j], ranges[i]+", "+ranges[j])
	}
	for _, a := range rangeVersions {
		ranges = append(ranges, a+" - 2.x")
	}
	for _, rng := range ranges {
		compareWithSemverLibrary(t, rng, rangeProbes, true)
	}
}

// FuzzRange: whatever ParseRange accepts, Masterminds/semver accepts too
// and allows the same versions; ParseRange may refuse what only the
// library's looser grammar takes (such as "1|2" as a version).
func FuzzRange(f *testing.F) {
	for _, v := range rangeVersions {
		f.Add("^"+v+" || >="+v, "1.2.3")
	}
	f.Add("1.2 - 1.4", "1.4.9")
	f.Add(">=1.0.0-beta.2 <2", "1.0.0-beta.10")
	f.Fuzz(func(t *testing.T, rng, v string) {
		compareWithSemverLibrary(t, rng, append([]string{v}, rangeProbes...), false)
	})
}

// compareWithSemverLibrary checks ParseRange(rng) against
// semver.NewConstraint on each probe (full versions; others are skipped).
// With mustParse, both must accept rng.
func compareWithSemverLibrary(t *testing.T, rng string, probes []string, mustParse bool) {
	t.Helper()
	r, err := ParseRange(rng)
	lib, libErr := semver.NewConstraint(rng)
	switch {
	case mustParse && (err != nil || libErr != nil):
		t.Errorf("range %q: ParseRange error %v, semver error %v; want both to parse it", rng, err, libErr)
		return
	case err != nil:
		return
	case libErr != nil:
		t.Errorf("ParseRange(%q) accepts what semver refuses: %v", rng, libErr)
		return
	}
	for _, p := range probes {
		v, err := semver.StrictNewVersion(p)
		if err != nil || !ValidVersion(p) {
			continue
		}
		if got, want := r.Allows(p), lib.Check(v); got != want {
			t.Errorf("ParseRange(%q).Allows(%q) = %v, semver's Check = %v", rng, p, got, want)
		}
	}
}
