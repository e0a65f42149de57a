package catalog_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registryserver/catalog"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/disk"
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

// countingLister counts the listings Seed asks of a storage that lists
// folders itself.
type countingLister struct {
	*disk.Storage
	lists, listDirs atomic.Int64
}

func (c *countingLister) List(ctx context.Context, prefix string) ([]string, error) {
	c.lists.Add(1)
	return c.Storage.List(ctx, prefix)
}

func (c *countingLister) ListDir(ctx context.Context, prefix string) ([]string, error) {
	c.listDirs.Add(1)
	return c.Storage.ListDir(ctx, prefix)
}

// TestSeedCostDoesNotGrow: whether a storage is empty is learnt from one
// path of folder listings, never from a listing of every key, however many
// registries it holds; folders without keys (a volume's lost+found, a
// folder emptied by hand) do not count as content.
func TestSeedCostDoesNotGrow(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		registries int
		emptyDirs  []string
		wantSeeded bool
		maxListDir int64
	}{
		{"empty", 0, nil, true, 1},
		{"only empty folders", 0, []string{"lost+found", "@old/gone/deep"}, true, 5},
		{"small catalog", 3, nil, false, 6},
		{"large catalog", 500, nil, false, 6},
		{"large catalog after an empty folder", 500, []string{"@a-empty/x"}, false, 8},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, d := range tt.emptyDirs {
				if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for i := range tt.registries {
				p := filepath.Join(dir, "@team", "group-"+strconv.Itoa(i%20), "reg-"+strconv.Itoa(i), "versions.json")
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(`{"versions":[]}`), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			d, err := disk.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Close() })
			st := &countingLister{Storage: d}
			seeded, err := catalog.Seed(t.Context(), st)
			if err != nil {
				t.Fatal(err)
			}
			if seeded != tt.wantSeeded {
				t.Errorf("seeded = %v, want %v", seeded, tt.wantSeeded)
			}
			if n := st.lists.Load(); n != 0 {
				t.Errorf("Seed listed every key %d times, want never", n)
			}
			if n := st.listDirs.Load(); n > tt.maxListDir {
				t.Errorf("Seed listed %d folders, want at most %d", n, tt.maxListDir)
			}
		})
	}
}
