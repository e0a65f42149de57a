package cache_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jigkit/jig/registryclient/cache"
)

// TestSignedMemory: versions seen signed are remembered with their
// index digest; the highest is tracked; a changed digest is refused
// without changing anything; forget drops a registry or one version;
// Clean keeps the memory.
func TestSignedMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.RecordSigned(ctx, "@main/a", "1.0.0", "sha256:aa"))
	must(c.RecordSigned(ctx, "@main/a", "1.2.0", "sha256:bb"))
	must(c.RecordSigned(ctx, "@main/a", "1.1.0", "sha256:cc"))
	must(c.RecordSigned(ctx, "@main/a", "1.1.0", "sha256:cc")) // again: fine
	s, ok, err := c.SeenSigned("@main/a")
	if err != nil || !ok || s.Highest != "1.2.0" || len(s.Versions) != 3 {
		t.Fatalf("SeenSigned = %+v, %v, %v", s, ok, err)
	}
	err = c.RecordSigned(ctx, "@main/a", "1.1.0", "sha256:dd")
	var ce *cache.SignedDigestChangedError
	if !errors.As(err, &ce) || ce.Before != "sha256:cc" || ce.Now != "sha256:dd" {
		t.Fatalf("re-signed version: %v", err)
	}
	must(c.Clean())
	if s, _, _ := c.SeenSigned("@main/a"); s.Versions["1.1.0"] != "sha256:cc" {
		t.Fatalf("after a refusal and Clean: %+v", s)
	}
	n, err := c.ForgetSigned(ctx, "@main/a@1.2.0")
	must(err)
	if s, _, _ := c.SeenSigned("@main/a"); n != 1 || s.Highest != "1.1.0" {
		t.Fatalf("forget one version: %d %+v", n, s)
	}
	must(c.RecordSigned(ctx, "@main/b", "1.0.0", "sha256:aa"))
	must(c.RecordSigned(ctx, "@mainx/c", "1.0.0", "sha256:aa"))
	n, err = c.ForgetSigned(ctx, "@main")
	must(err)
	if _, ok, _ := c.SeenSigned("@mainx/c"); n != 2 || !ok {
		t.Fatalf("forget a namespace: %d, @mainx kept %v", n, ok)
	}
}

// TestSignedMemoryConcurrent: writers in parallel (each its own lock
// file handle, as separate processes have) lose no record.
func TestSignedMemoryConcurrent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := cache.Open(dir)
			if err != nil {
				t.Error(err)
				return
			}
			for j := range 4 {
				if err := c.RecordSigned(context.Background(), fmt.Sprintf("@ns/r%d", i), fmt.Sprintf("1.%d.0", j), "sha256:x"); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	c, _ := cache.Open(dir)
	for i := range 16 {
		s, ok, err := c.SeenSigned(fmt.Sprintf("@ns/r%d", i))
		if err != nil || !ok || s.Highest != "1.3.0" || len(s.Versions) != 4 {
			t.Fatalf("r%d: %+v %v %v", i, s, ok, err)
		}
	}
}

// TestSignedMemoryDamaged: a damaged file is an error, never an empty
// memory (that would disarm rollback protection).
func TestSignedMemoryDamaged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, _ := cache.Open(dir)
	if err := os.WriteFile(filepath.Join(dir, "signed.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.SeenSigned("@main/a"); err == nil {
		t.Fatal("damaged memory read as empty")
	}
	if err := c.RecordSigned(context.Background(), "@main/a", "1.0.0", "sha256:aa"); err == nil {
		t.Fatal("damaged memory overwritten")
	}
}

// TestSignedMemoryBounded: the versions kept per registry are capped,
// the highest always among them.
func TestSignedMemoryBounded(t *testing.T) {
	t.Parallel()
	c, _ := cache.Open(t.TempDir())
	for i := range cache.MaxSignedVersions + 10 {
		if err := c.RecordSigned(context.Background(), "@main/a", fmt.Sprintf("0.0.%d", i), "sha256:x"); err != nil {
			t.Fatal(err)
		}
	}
	s, _, _ := c.SeenSigned("@main/a")
	if len(s.Versions) != cache.MaxSignedVersions || s.Highest != fmt.Sprintf("0.0.%d", cache.MaxSignedVersions+9) {
		t.Fatalf("%d versions, highest %s", len(s.Versions), s.Highest)
	}
	if _, ok := s.Versions["0.0.0"]; ok {
		t.Fatal("lowest version kept")
	}
}

// TestSignedMemoryBatched: records made at once through one cache are
// written together; each caller gets its own answer (a changed digest is
// refused for that record only).
func TestSignedMemoryBatched(t *testing.T) {
	t.Parallel()
	c, _ := cache.Open(t.TempDir())
	if err := c.RecordSigned(context.Background(), "@ns/fixed", "1.0.0", "sha256:a"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 33)
	for i := range 32 {
		wg.Go(func() { errs[i] = c.RecordSigned(context.Background(), fmt.Sprintf("@ns/r%d", i), "1.0.0", "sha256:x") })
	}
	wg.Go(func() { errs[32] = c.RecordSigned(context.Background(), "@ns/fixed", "1.0.0", "sha256:b") })
	wg.Wait()
	for i, err := range errs[:32] {
		if err != nil {
			t.Errorf("r%d: %v", i, err)
		}
		if _, ok, _ := c.SeenSigned(fmt.Sprintf("@ns/r%d", i)); !ok {
			t.Errorf("r%d not remembered", i)
		}
	}
	var ce *cache.SignedDigestChangedError
	if !errors.As(errs[32], &ce) {
		t.Errorf("changed digest: %v", errs[32])
	}
	if s, _, _ := c.SeenSigned("@ns/fixed"); s.Versions["1.0.0"] != "sha256:a" {
		t.Errorf("fixed: %+v", s)
	}
}

// TestSignedMemoryOtherProcess: what another process (another Cache on
// the same directory) records is seen at once, though readers reuse the
// parsed memory.
func TestSignedMemoryOtherProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, _ := cache.Open(dir)
	b, _ := cache.Open(dir)
	ctx := context.Background()
	for i := range 5 {
		v := fmt.Sprintf("1.%d.0", i)
		if err := b.RecordSigned(ctx, "@ns/r", v, "sha256:x"); err != nil {
			t.Fatal(err)
		}
		if s, ok, err := a.SeenSigned("@ns/r"); err != nil || !ok || s.Highest != v {
			t.Fatalf("after %s: %+v %v %v", v, s, ok, err)
		}
	}
}
