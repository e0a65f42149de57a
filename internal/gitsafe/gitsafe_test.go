package gitsafe

import (
	"slices"
	"testing"
)

func TestNoFilters(t *testing.T) {
	t.Parallel()
	opts, bad := NoFilters([]string{"filter.lfs.process", "filter.lfs.required", "filter.a.b.clean", "filter.ev=il.clean", "filter.x", "core.editor", ""})
	want := []string{
		"-c", "filter.lfs.clean=", "-c", "filter.lfs.smudge=", "-c", "filter.lfs.process=", "-c", "filter.lfs.required=false",
		"-c", "filter.a.b.clean=", "-c", "filter.a.b.smudge=", "-c", "filter.a.b.process=", "-c", "filter.a.b.required=false",
	}
	if !slices.Equal(opts, want) {
		t.Errorf("options %q, want %q", opts, want)
	}
	if !slices.Equal(bad, []string{"ev=il"}) {
		t.Errorf("bad %q, want the name holding =", bad)
	}
}
