package apply_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient/apply"
)

func TestCensusReports(t *testing.T) {
	t.Parallel()
	f := func(target string, s apply.FileStatus) apply.FileCheck {
		return apply.FileCheck{Target: target, Status: s}
	}
	rep := &apply.CheckReport{Registries: []apply.RegistryCheck{
		{Key: "@a/clean", Version: "1.0.0", Files: []apply.FileCheck{f("x", apply.FileUnchanged), f("y", apply.FileResolved)}},
		{Key: "@a/mod", Version: "1.0.0", Files: []apply.FileCheck{f("z", apply.FileMissing), f("b", apply.FileModified)}},
		{Key: "@b/conf", Version: "2.0.0", Files: []apply.FileCheck{f("c", apply.FileConflict), f("b", apply.FileModified)}},
		{Key: "@b/miss", Version: "2.0.0", Files: []apply.FileCheck{f("m", apply.FileMissing)}},
		{Key: "@b/pkg", Version: "2.0.0", Packages: []apply.PackageDrift{{Section: "dependencies", Name: "x"}}},
		// Resolved with ours: the version's changes were not taken.
		{Key: "@b/ours", Version: "2.0.0", Files: []apply.FileCheck{f("o", apply.FileNotTaken), f("u", apply.FileUnchanged)}},
	}}
	got := apply.CensusReports(rep, wire.CensusReport{Project: "p", Commit: "c"})
	want := map[string]*wire.CensusReport{
		"@a": {Project: "p", Commit: "c", Registries: []wire.CensusEntry{
			{Path: "clean", Version: "1.0.0", State: "clean"},
			{Path: "mod", Version: "1.0.0", State: "modified", Drifted: []string{"b", "z"}},
		}},
		"@b": {Project: "p", Commit: "c", Registries: []wire.CensusEntry{
			{Path: "conf", Version: "2.0.0", State: "conflicted", Drifted: []string{"b", "c"}},
			{Path: "miss", Version: "2.0.0", State: "missing", Drifted: []string{"m"}},
			{Path: "pkg", Version: "2.0.0", State: "modified", Drifted: []string{"package.json"}},
			{Path: "ours", Version: "2.0.0", State: "modified", Drifted: []string{"o"}},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CensusReports (-want +got):\n%s", diff)
	}
}
