package merge

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

// TestMerge3Golden runs every case of testdata/merge3/<case>: target names
// the project file (its basename picks the strategy), base is what the
// installed registry version renders, ours the project's file, theirs what
// the target version renders, want the expected result and conflicts the
// expected conflict paths (one per line; absent: none). For package.json,
// base, theirs and the optional retain are package fragments (JSON) and ours
// is the project's package.json. Run with -update to rewrite want and
// conflicts after checking the change by hand.
func TestMerge3Golden(t *testing.T) {
	t.Parallel()
	eachGoldenCase(t, "merge3", func(t *testing.T, dir, target string) {
		base := mustRead(t, filepath.Join(dir, "base"))
		ours := mustRead(t, filepath.Join(dir, "ours"))
		theirs := mustRead(t, filepath.Join(dir, "theirs"))
		var got []byte
		var conflicts []Conflict
		if target == "package.json" {
			var bf, tf, rf registry.PackageFragment
			mustJSON(t, base, &bf)
			mustJSON(t, theirs, &tf)
			if b, err := os.ReadFile(filepath.Join(dir, "retain")); err == nil {
				mustJSON(t, b, &rf)
			}
			res, err := Merge3PackageJSON(ours, bf, tf, rf)
			if err != nil {
				t.Fatalf("Merge3PackageJSON: %v", err)
			}
			got, conflicts = res.Content, res.Conflicts
		} else {
			strategy := StrategyFor(target, nil)
			res, err := Merge3(strategy, base, ours, theirs, "@team/x@1.1.0")
			if err != nil {
				t.Fatalf("Merge3(%s): %v", strategy, err)
			}
			got, conflicts = res.Content, res.Conflicts
			// Merging the same change again changes nothing more.
			if len(conflicts) == 0 {
				again, err := Merge3(strategy, base, got, theirs, "@team/x@1.1.0")
				if err != nil {
					t.Fatal(err)
				}
				if strategy != registry.StrategyOverwrite && !bytes.Equal(again.Content, got) {
					t.Errorf("merging twice changed the result:\ngot:\n%s\nwant:\n%s", again.Content, got)
				}
			}
		}
		var paths []string
		for _, c := range conflicts {
			paths = append(paths, c.Path)
		}
		gotConflicts := strings.Join(paths, "\n")
		if len(paths) > 0 {
			gotConflicts += "\n"
		}
		wantPath, conflictsPath := filepath.Join(dir, "want"), filepath.Join(dir, "conflicts")
		if *updateGolden {
			writeGolden(t, wantPath, got)
			_ = os.Remove(conflictsPath)
			if gotConflicts != "" {
				writeGolden(t, conflictsPath, []byte(gotConflicts))
			}
		}
		if want := mustRead(t, wantPath); !bytes.Equal(got, want) {
			t.Errorf("content:\ngot:\n%s\nwant:\n%s", got, want)
		}
		wantConflicts, _ := os.ReadFile(conflictsPath)
		if gotConflicts != string(wantConflicts) {
			t.Errorf("conflicts: got %q, want %q", gotConflicts, wantConflicts)
		}
	})
}

func writeGolden(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// TestMerge3ConflictKind: a line merge's conflict is of kind
// ConflictMarkers with its lines; a structural merge's keeps ours.
func TestMerge3ConflictKind(t *testing.T) {
	t.Parallel()
	res, err := Merge3(registry.StrategyOverwrite, []byte("a\nb\n"), []byte("a\nours\n"), []byte("a\ntheirs\n"), "@team/x@1.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0].Kind != ConflictMarkers || res.Conflicts[0].Lines != (registry.ConflictBlock{Start: 2, End: 8}) || res.Conflicts[0].Path != "lines 2-8" {
		t.Errorf("line merge: got %+v, want one ConflictMarkers at lines 2-8", res.Conflicts)
	}
	res, err = Merge3(registry.StrategyJSON, []byte(`{"a":1}`), []byte(`{"a":2}`), []byte(`{"a":3}`), "@team/x@1.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0].Kind != ConflictKept {
		t.Errorf("JSON merge: got %+v, want one ConflictKept", res.Conflicts)
	}
}

// TestMerge3UntrustedBase: a base that is not trusted decides what
// counts as the project's change, but none of it is written or reported.
func TestMerge3UntrustedBase(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, target       string
		base, ours, theirs string
		want               string
		conflicts          int
	}{
		{"lines conflict", "a.txt", "one\nevil\n", "one\nmine\n", "one\nnew\n",
			"one\n<<<<<<< ours\nmine\n=======\nnew\n>>>>>>> x@1\n", 1},
		{"lines clean", "a.txt", "one\ntwo\nthree\n", "one (mine)\ntwo\nthree\n", "one\ntwo\nthree\nfour\n",
			"one (mine)\ntwo\nthree\nfour\n", 0},
		{"json conflict", "a.json", `{"a":"evil"}`, `{"a":"mine"}`, `{"a":"new"}`, `{"a":"mine"}`, 1},
		{"env conflict", ".env", "A=evil\n", "A=mine\n", "A=new\n", "A=mine\n", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := StrategyFor(c.target, nil)
			res, err := Merge3UntrustedBase(t.Context(), s, []byte(c.base), []byte(c.ours), []byte(c.theirs), "x@1")
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Content) != c.want {
				t.Errorf("content: got %q, want %q", res.Content, c.want)
			}
			if len(res.Conflicts) != c.conflicts {
				t.Fatalf("conflicts: got %d, want %d", len(res.Conflicts), c.conflicts)
			}
			for _, cf := range res.Conflicts {
				if cf.Base != "" {
					t.Errorf("conflict %s reports the base value %q", cf.Path, cf.Base)
				}
			}
			// The trusted merge of the same sides shows the base.
			if c.conflicts > 0 {
				full, err := Merge3Context(t.Context(), s, []byte(c.base), []byte(c.ours), []byte(c.theirs), "x@1")
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(full.Content), "evil") && full.Conflicts[0].Base == "" {
					t.Errorf("the trusted merge does not show the base either: %q", full.Content)
				}
			}
		})
	}
}
