package storage_test

import (
	"context"
	"errors"
	"strings"
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

func TestCheckKeyPrefixFolder(t *testing.T) {
	t.Parallel()
	live := t.Context()
	done, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name    string
		err     error
		wantMsg string // "" for no error
		wantIs  error
	}{
		{"key", storage.CheckKey(live, "disk", "get", "@main/a/versions.json"), "", nil},
		{"bad key", storage.CheckKey(live, "disk", "get", "@main/../x"), `disk: get "@main/../x": `, storage.ErrInvalidKey},
		{"key, cancelled", storage.CheckKey(done, "s3", "put", "@main/x"), `s3: put "@main/x": `, context.Canceled},
		{"bad key wins over cancelled", storage.CheckKey(done, "s3", "put", "/x"), `s3: put "/x": `, storage.ErrInvalidKey},
		{"prefix", storage.CheckPrefix(live, "memory", "@main/run"), "", nil},
		{"empty prefix", storage.CheckPrefix(live, "memory", ""), "", nil},
		{"bad prefix", storage.CheckPrefix(live, "memory", "a//b"), `memory: list "a//b": `, storage.ErrInvalidKey},
		{"prefix, cancelled", storage.CheckPrefix(done, "memory", "a"), `memory: list "a": `, context.Canceled},
		{"folder", storage.CheckFolder(live, "disk", "@main/"), "", nil},
		{"root folder", storage.CheckFolder(live, "disk", ""), "", nil},
		{"folder without slash", storage.CheckFolder(live, "disk", "@main"), `disk: list folder "@main": want "" or a folder ending in "/"`, storage.ErrInvalidKey},
		{"folder, cancelled", storage.CheckFolder(done, "disk", "@main/"), `disk: list folder "@main/": `, context.Canceled},
	}
	for _, tt := range tests {
		switch {
		case tt.wantMsg == "" && tt.err != nil:
			t.Errorf("%s: got %v, want nil", tt.name, tt.err)
		case tt.wantMsg != "" && (tt.err == nil || !strings.HasPrefix(tt.err.Error(), tt.wantMsg) || !errors.Is(tt.err, tt.wantIs)):
			t.Errorf("%s: got %v, want an error starting %q wrapping %v", tt.name, tt.err, tt.wantMsg, tt.wantIs)
		}
	}
}
