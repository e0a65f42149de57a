package catalog_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registryserver/catalog"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func TestSeedEmptyStorage(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := &recordingStorage{Storage: memory.New()}
	seeded, err := catalog.Seed(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if !seeded {
		t.Fatal("got seeded false for an empty storage, want true")
	}
	if diff := cmp.Diff(catalog.Keys(), st.puts); diff != "" {
		t.Errorf("write order mismatch (-want +got):\n%s", diff)
	}
	got, err := st.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	err = fs.WalkDir(catalog.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			want = append(want, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored keys mismatch (-embedded +stored):\n%s", diff)
	}
	for _, k := range want {
		if !storage.ValidKey(k) {
			t.Errorf("embedded path %q is not a valid storage key", k)
		}
		wantB, err := fs.ReadFile(catalog.FS(), k)
		if err != nil {
			t.Fatal(err)
		}
		rc, info, err := st.Get(ctx, k)
		if err != nil {
			t.Fatalf("get %s: %v", k, err)
		}
		gotB, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gotB, wantB) {
			t.Errorf("%s: stored content differs from the embedded file", k)
		}
		if info.Size != int64(len(wantB)) {
			t.Errorf("%s: got size %d, want %d", k, info.Size, len(wantB))
		}
	}

	// A second run finds the storage populated and writes nothing.
	st.puts = nil
	seeded, err = catalog.Seed(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if seeded || len(st.puts) != 0 {
		t.Errorf("second Seed: got seeded %v with %d writes, want false with none", seeded, len(st.puts))
	}
}

func TestSeedNonEmptyStorage(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := &recordingStorage{Storage: memory.New()}
	if err := st.Storage.Put(ctx, "@acme/tools/x/versions.json", strings.NewReader(`{"versions":[]}`), -1); err != nil {
		t.Fatal(err)
	}
	seeded, err := catalog.Seed(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if seeded {
		t.Error("got seeded true for a storage holding a key, want false")
	}
	if len(st.puts) != 0 {
		t.Errorf("got %d writes, want none: %v", len(st.puts), st.puts)
	}
}

func TestSeedErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		st       storage.Storage
		wantText string
	}{
		{"list fails", listErrStorage{memory.New()}, "list the storage"},
		{"third write fails", &recordingStorage{Storage: memory.New(), failAt: 3}, "catalog: seed " + catalog.Keys()[2]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			seeded, err := catalog.Seed(t.Context(), tt.st)
			if !errors.Is(err, errInjected) {
				t.Fatalf("got error %v, want one wrapping %v", err, errInjected)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("got error %q, want it to contain %q", err, tt.wantText)
			}
			if seeded {
				t.Error("got seeded true on failure, want false")
			}
		})
	}
}

func BenchmarkSeed(b *testing.B) {
	ctx := b.Context()
	for b.Loop() {
		if _, err := catalog.Seed(ctx, memory.New()); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSeedWritesHealthMarker checks that a seeded storage has the marker
// the reference server's /health looks for, written last (issue 10 item
// 25b).
func TestSeedWritesHealthMarker(t *testing.T) {
	t.Parallel()
	st := &recordingStorage{Storage: memory.New()}
	if _, err := catalog.Seed(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Stat(t.Context(), ".healthcheck"); err != nil {
		t.Errorf("Stat(.healthcheck) after Seed: %v, want the marker", err)
	}
	if last := st.puts[len(st.puts)-1]; last != ".healthcheck" {
		t.Errorf("last write %q, want .healthcheck", last)
	}
}
