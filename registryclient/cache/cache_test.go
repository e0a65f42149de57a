package cache_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient/cache"
)

func Example() {
	dir, _ := os.MkdirTemp("", "jig-cache-")
	defer os.RemoveAll(dir)
	c, _ := cache.Open(dir)
	d, _ := c.Put([]byte("hello\n"))
	_ = c.SetRef("server/@main/a/1.0.0", d)
	ref, _ := c.Ref("server/@main/a/1.0.0")
	b, ok := c.Get(ref)
	fmt.Println(d == registry.Digest([]byte("hello\n")), string(b) == "hello\n", ok)
	fmt.Println(c.Children("server/@main/a"))
	// Output:
	// true true true
	// [1.0.0]
}

func TestCorruptEntryIsAMiss(t *testing.T) {
	t.Parallel()
	c, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Put([]byte("content"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(c.Dir(), "sha256", registry.DigestHex(d))
	if err := os.WriteFile(p, []byte("changed"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, problems, _ := c.Verify(); len(problems) != 1 {
		t.Errorf("Verify: got %v, want one problem", problems)
	}
	if _, ok := c.Get(d); ok {
		t.Fatal("Get of a corrupt entry: got a hit")
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("corrupt entry: got %v, want it removed", err)
	}
	if n, problems, _ := c.Verify(); len(problems) != 0 || n != 0 {
		t.Errorf("Verify after removal: %d entries, problems %v", n, problems)
	}
}

func TestRefsRejectEscapes(t *testing.T) {
	t.Parallel()
	c, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d := registry.Digest(nil)
	for _, bad := range []string{"", "../x", "a/../../x", "/abs", "a//b", "a/./b", `a\b`, "a/b:c", "a/\x00"} {
		if err := c.SetRef(bad, d); err == nil {
			t.Errorf("SetRef(%q): got nil error", bad)
		}
	}
	if err := c.SetRef("a/b", "sha256:nothex"); err == nil {
		t.Error("SetRef with a bad digest: got nil error")
	}
}

func TestTrimEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	c, err := cache.Open(t.TempDir(), cache.WithMaxBytes(1000))
	if err != nil {
		t.Fatal(err)
	}
	var ds []string
	for i := range 3 {
		d, err := c.Put([]byte(strings.Repeat(fmt.Sprint(i), 400)))
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
		if err := c.SetRef(fmt.Sprintf("s/@main/a/1.0.%d", i), d); err != nil {
			t.Fatal(err)
		}
		// Use times in the past, in order, so the order does not depend
		// on the file system's timestamp resolution.
		if i < 2 {
			old := time.Date(2000, 1, 1, 0, 0, i, 0, time.UTC)
			if err := os.Chtimes(filepath.Join(c.Dir(), "sha256", registry.DigestHex(d)), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Put trims as it goes: at most 1000 bytes remain, the newest entry
	// among them.
	if n, _ := c.Size(); n > 1000 {
		t.Errorf("size %d over the cap", n)
	}
	if _, ok := c.Get(ds[2]); !ok {
		t.Error("the most recent entry was evicted")
	}
	if _, ok := c.Get(ds[0]); ok {
		t.Error("the least recent entry survived")
	}
	if _, ok := c.Ref("s/@main/a/1.0.0"); ok {
		t.Error("a ref to an evicted entry survived")
	}
}

// Many goroutines (standing in for processes; the cache keeps no state in
// memory) writing and reading the same entries never see a partial one.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			c, err := cache.Open(dir)
			if err != nil {
				t.Error(err)
				return
			}
			for j := range 50 {
				data := []byte(strings.Repeat(fmt.Sprint(j%5), 10000))
				d, err := c.Put(data)
				if err != nil {
					t.Error(err)
					return
				}
				if err := c.SetRef(fmt.Sprintf("s/@main/x/1.0.%d", j%5), d); err != nil {
					t.Error(err)
					return
				}
				if b, ok := c.Get(d); ok && string(b) != string(data) {
					t.Errorf("writer %d: partial entry", i)
				}
			}
		})
	}
	wg.Wait()
	c, _ := cache.Open(dir)
	if n, problems, err := c.Verify(); err != nil || len(problems) != 0 || n != 5 {
		t.Errorf("Verify: %d entries, %v, %v", n, problems, err)
	}
	if err := c.Clean(); err != nil {
		t.Fatal(err)
	}
	if es, _ := c.List(); len(es) != 0 {
		t.Errorf("after Clean: %v", es)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if got := cache.DefaultDir(env(map[string]string{"JIG_CACHE_DIR": "/x/y", "XDG_CACHE_HOME": "/c"})); got != "/x/y" {
		t.Errorf("JIG_CACHE_DIR: got %q", got)
	}
	if got := cache.DefaultDir(env(nil)); got != "" {
		t.Errorf("empty environment: got %q, want \"\"", got)
	}
	if runtime.GOOS != "linux" {
		return
	}
	if got := cache.DefaultDir(env(map[string]string{"XDG_CACHE_HOME": "/c", "HOME": "/h"})); got != filepath.Join("/c", "jig") {
		t.Errorf("XDG_CACHE_HOME: got %q", got)
	}
	if got := cache.DefaultDir(env(map[string]string{"XDG_CACHE_HOME": "relative", "HOME": "/h"})); got != filepath.Join("/h", ".cache", "jig") {
		t.Errorf("HOME: got %q", got)
	}
}

// TestWritesArePrivate: what the cache writes (a blob, a ref, the signed
// memory) is readable by its owner only, in folders of the owner only,
// and a write leaves nothing in the temporary folder; a failed write
// (a folder where the ref goes) neither.
func TestWritesArePrivate(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("Unix modes")
	}
	dir := t.TempDir()
	c, err := cache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Put([]byte("content"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetRef("server/@main/a/1.0.0", d); err != nil {
		t.Fatal(err)
	}
	if err := c.RecordSigned(t.Context(), "server/@main/a", "1.0.0", d); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "refs", "server", "@main", "b", "1.0.0"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := c.SetRef("server/@main/b/1.0.0", d); err == nil {
		t.Error("SetRef over a folder succeeded")
	}
	files := 0
	err = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case e.IsDir() && p != dir && fi.Mode().Perm() != 0o700:
			t.Errorf("folder %s: mode %v, want 0700", rel, fi.Mode().Perm())
		case !e.IsDir():
			files++
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("file %s: mode %v, want 0600", rel, fi.Mode().Perm())
			}
			if filepath.Dir(rel) == "tmp" {
				t.Errorf("left in the temporary folder: %s", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 3 {
		t.Errorf("found %d files, want the blob, the ref and the signed memory", files)
	}
}
