package merge

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

// fuzzLines turns fuzz bytes into text: in line mode every byte becomes one
// of 6 short lines (so the three sides share many lines and the diff has
// work to do); otherwise the bytes are used as they are.
func fuzzLines(b []byte, lineMode bool) []byte {
	if !lineMode {
		return b
	}
	var sb strings.Builder
	for _, c := range b {
		fmt.Fprintf(&sb, "line %d\n", c%6)
	}
	return []byte(sb.String())
}

// FuzzMerge3 checks the properties of every three-way merge: with ours
// equal to base the result is theirs, with theirs equal to base it is ours
// (both through [Merge3] and through each strategy's own merge, which
// skips Merge3's shortcuts), a merge of two equal sides is clean, and
// nothing panics.
func FuzzMerge3(f *testing.F) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "merge3", "*"))
	if len(dirs) == 0 {
		f.Fatal("no seed cases in testdata/merge3")
	}
	for _, dir := range dirs {
		read := func(name string) []byte {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				f.Fatal(err)
			}
			return b
		}
		// The strategy bits follow the case's target.
		mode := uint8(0)
		switch StrategyFor(string(read("target")), nil) {
		case registry.StrategyJSON:
			mode = 2
		case registry.StrategyIgnore:
			mode = 4
		case registry.StrategyEnv:
			mode = 6
		}
		f.Add(read("base"), read("ours"), read("theirs"), mode)
	}
	f.Add([]byte{0, 1, 2, 3}, []byte{0, 4, 2, 3}, []byte{0, 1, 2, 5}, uint8(1))
	f.Add([]byte{0, 1, 2}, []byte{1, 2}, []byte{0, 1, 2, 3}, uint8(1))
	f.Fuzz(func(t *testing.T, b, o, th []byte, mode uint8) {
		// Bounded sizes keep every run fast; TestMerge3LargeInputs covers
		// big files.
		const maxInput = 512
		b, o, th = b[:min(len(b), maxInput)], o[:min(len(o), maxInput)], th[:min(len(th), maxInput)]
		lineMode := mode&1 == 1
		base, ours, theirs := fuzzLines(b, lineMode), fuzzLines(o, lineMode), fuzzLines(th, lineMode)
		strategies := []registry.Strategy{registry.StrategyOverwrite, registry.StrategyJSON, registry.StrategyIgnore, registry.StrategyEnv}
		s := strategies[int(mode>>1)%len(strategies)]
		res, err := Merge3(s, base, base, theirs, "x@1")
		if err != nil {
			t.Fatalf("Merge3(%s, ours=base): %v", s, err)
		}
		if !bytes.Equal(res.Content, theirs) || len(res.Conflicts) > 0 {
			t.Fatalf("Merge3(%s) with ours = base: got %q, want theirs %q", s, res.Content, theirs)
		}
		res, err = Merge3(s, base, ours, base, "x@1")
		if err != nil {
			t.Fatalf("Merge3(%s, theirs=base): %v", s, err)
		}
		if !bytes.Equal(res.Content, ours) || len(res.Conflicts) > 0 {
			t.Fatalf("Merge3(%s) with theirs = base: got %q, want ours %q", s, res.Content, ours)
		}
		// Any merge: no panic; JSON fails only on input that does not parse.
		if res, err := Merge3(s, base, ours, theirs, "x@1"); err == nil && res.Content == nil {
			t.Fatalf("Merge3(%s) returned no content", s)
		}

		// The line merge itself (no shortcuts), on LF text.
		lb, lo, lt := toLF(base), toLF(ours), toLF(theirs)
		if !bytes.Contains(lb, []byte("\r")) && !bytes.Contains(lo, []byte("\r")) && !bytes.Contains(lt, []byte("\r")) {
			if got := merge3Lines(lb, lb, lt, "x@1", true); !bytes.Equal(got.Content, lt) || len(got.Conflicts) > 0 {
				t.Fatalf("merge3Lines with ours = base:\ngot  %q\nwant %q", got.Content, lt)
			}
			if got := merge3Lines(lb, lo, lb, "x@1", true); !bytes.Equal(got.Content, lo) || len(got.Conflicts) > 0 {
				t.Fatalf("merge3Lines with theirs = base:\ngot  %q\nwant %q", got.Content, lo)
			}
			if got := merge3Lines(lb, lo, lo, "x@1", true); !bytes.Equal(got.Content, lo) || len(got.Conflicts) > 0 {
				t.Fatalf("merge3Lines with ours = theirs:\ngot  %q\nwant %q", got.Content, lo)
			}
			got := merge3Lines(lb, lo, lt, "x@1", true)
			if n := bytes.Count(got.Content, []byte(MarkerOurs+"\n")); n < len(got.Conflicts) {
				t.Fatalf("merge3Lines: %d conflicts but %d markers", len(got.Conflicts), n)
			}
		}
		// An untrusted base is never written: with base lines no other
		// side has, none reaches the result.
		if lineMode {
			foreign := bytes.ReplaceAll(base, []byte("line "), []byte("BASE "))
			if res, err := Merge3UntrustedBase(t.Context(), s, foreign, ours, theirs, "x@1"); err == nil {
				if bytes.Contains(res.Content, []byte("BASE")) || bytes.Contains(res.Content, []byte(MarkerBase)) {
					t.Fatalf("Merge3UntrustedBase(%s) wrote the base:\n%s", s, res.Content)
				}
				for _, c := range res.Conflicts {
					if c.Base != "" {
						t.Fatalf("Merge3UntrustedBase(%s) reported the base value %q", s, c.Base)
					}
				}
			}
		}
		// The set and key merges: theirs' additions land, base-only lines go.
		if s == registry.StrategyIgnore {
			got := splitLines(merge3Ignore(lb, lo, lt).Content)
			gs, bs, os := lineSet(got), lineSet(splitLines(lb)), lineSet(splitLines(lo))
			for l := range lineSet(splitLines(lt)) {
				if !bs[l] && !gs[l] {
					t.Fatalf("merge3Ignore lost %q added by theirs", l)
				}
			}
			for l := range os {
				if !gs[l] && (!bs[l] || lineSet(splitLines(lt))[l]) {
					t.Fatalf("merge3Ignore lost %q of ours", l)
				}
			}
		}
	})
}

// TestMatchLinesIsLCS compares the diff's matching with a dynamic
// programming LCS on small inputs: same length, strictly increasing, equal
// lines only.
func TestMatchLinesIsLCS(t *testing.T) {
	t.Parallel()
	cases := [][2]string{
		{"abcabba", "cbabac"},
		{"", "abc"},
		{"abc", ""},
		{"aaaa", "aa"},
		{"abcdefg", "gfedcba"},
		{"xaxbxcx", "abc"},
		{"the quick brown fox", "the quack brawn fix"},
	}
	for _, c := range cases {
		a, b := []byte(c[0]), []byte(c[1])
		ai, bi := make([]int32, len(a)), make([]int32, len(b))
		for i := range a {
			ai[i] = int32(a[i])
		}
		for i := range b {
			bi[i] = int32(b[i])
		}
		m := matchLines(ai, bi)
		n, last := 0, -1
		for i, j := range m {
			if j < 0 {
				continue
			}
			if j <= last || a[i] != b[j] {
				t.Fatalf("matchLines(%q, %q): bad match %d->%d", c[0], c[1], i, j)
			}
			last = j
			n++
		}
		if want := lcsLen(a, b); n != want {
			t.Errorf("matchLines(%q, %q): got %d matches, want %d", c[0], c[1], n, want)
		}
	}
}

func lcsLen(a, b []byte) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// TestMerge3LargeInputs: big files merge exactly while the edit distance
// stays under the diff's bound, and coarsely beyond it (the differing middle
// becomes one conflict when both sides changed it), never with quadratic
// memory.
func TestMerge3LargeInputs(t *testing.T) {
	t.Parallel()
	gen := func(n, every int, mark string) string {
		var sb strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&sb, "line %d", i)
			if every > 0 && i%every == 1 {
				sb.WriteString(mark)
			}
			sb.WriteByte('\n')
		}
		return sb.String()
	}
	const n = 50000
	base := gen(n, 0, "")
	theirs := strings.Replace(base, "line 25100\n", "line 25100 theirs\n", 1) + "appended\n"
	tests := []struct {
		name      string
		every     int // ours changes every n-th line
		conflicts int
	}{
		{"within the bound", 200, 0}, // 250 changed lines
		{"beyond the bound", 7, 1},   // 7143 changed lines
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ours := gen(n, tt.every, " ours")
			res, err := Merge3(registry.StrategyOverwrite, []byte(base), []byte(ours), []byte(theirs), "x@2")
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Conflicts) != tt.conflicts {
				t.Fatalf("got %d conflicts, want %d", len(res.Conflicts), tt.conflicts)
			}
			want := strings.Replace(ours, "line 25100\n", "line 25100 theirs\n", 1) + "appended\n"
			if tt.conflicts == 0 && string(res.Content) != want {
				t.Fatalf("got %d bytes, want ours plus both changes of theirs", len(res.Content))
			}
		})
	}
}

// FuzzJSONIdent: jsonIdent accepts exactly what JavaScript's ASCII
// identifier pattern accepts, so conflict paths read as before.
func FuzzJSONIdent(f *testing.F) {
	re := regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)
	for _, s := range []string{"compilerOptions", "@/*", "$schema", "_a1", "1a", "", "a-b", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := jsonIdent(s), re.MatchString(s); got != want {
			t.Errorf("jsonIdent(%q) = %v, the pattern says %v", s, got, want)
		}
	})
}
