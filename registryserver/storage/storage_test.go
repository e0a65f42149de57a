package storage_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registryserver/storage"
)

func TestChildrenOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		prefix string
		keys   []string
		want   []string
	}{
		{"", nil, []string{}},
		{"", []string{"a", "b/c", "b/d/e", "a-b/c"}, []string{"a", "a-b/", "b/"}},
		{"b/", []string{"b/c", "b/d/e", "b/d/f"}, []string{"b/c", "b/d/"}},
		{"b/", []string{"b/", "x/y"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			t.Parallel()
			got := storage.ChildrenOf(tt.prefix, tt.keys)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ChildrenOf(%q, %q) (-want +got):\n%s", tt.prefix, tt.keys, diff)
			}
		})
	}
}

func TestValidPrefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		prefix string
		want   bool
	}{
		{"", true},
		{"@main/", true},
		{"@main/run", true},
		{"presets/node/preset.json", true},
		{"/", false},
		{"@main//", false},
		{"../", false},
		{"a/../b/", false},
		{`a\b/`, false},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			t.Parallel()
			if got := storage.ValidPrefix(tt.prefix); got != tt.want {
				t.Errorf("ValidPrefix(%q) = %t, want %t", tt.prefix, got, tt.want)
			}
		})
	}
}
