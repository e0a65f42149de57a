package disk_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/disk"
	"github.com/jigkit/jig/registryserver/storage/storagetest"
)

func newDisk(t testing.TB, root string) *disk.Storage {
	t.Helper()
	st, err := disk.New(root)
	if err != nil {
		t.Fatalf("disk.New(%q): %v", root, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storagetest.Run(t, func(t *testing.T) storage.Storage { return newDisk(t, t.TempDir()) })
}

func TestNewCreatesRoot(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "a", "b", "data")
	st := newDisk(t, root)
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		t.Fatalf("root after New: %v, want a directory", err)
	}
	if st.Dir() != root {
		t.Errorf("Dir() = %q, want %q", st.Dir(), root)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 0 {
		t.Errorf("New wrote %d entries into the root, want none before the first write", len(entries))
	}
	if _, err := disk.New(""); err == nil {
		t.Errorf("New(\"\") error = nil, want an error")
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, []byte("x"), 0o644)
	if _, err := disk.New(file); err == nil {
		t.Errorf("New(a regular file) error = nil, want an error")
	}
}

// TestReferenceLayout serves a directory written by hand (or by the
// reference server): files appear under their paths, with the reference's
// ETag format, and the reference's .tmp folder is ignored.
func TestReferenceLayout(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{
		"@rack/runtimes/node/versions.json":              `{"versions":["1.0.0"]}`,
		"@rack/runtimes/node/1.0.0/registry.json":        `{"name":"node"}`,
		"@rack/runtimes/node/1.0.0/templates/.gitignore": "node_modules\n",
		"presets/node/preset.json":                       `{"name":"node"}`,
		".healthcheck":                                   "ok",
		".tmp/upload-123.tar.gz":                         "junk",
		".tmp/extract-123/registry.json":                 "junk",
	}
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mtime := time.UnixMilli(1700000000123)
	os.Chtimes(filepath.Join(root, "presets/node/preset.json"), mtime, mtime)
	st := newDisk(t, root)
	keys, err := st.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		".healthcheck",
		"@rack/runtimes/node/1.0.0/registry.json",
		"@rack/runtimes/node/1.0.0/templates/.gitignore",
		"@rack/runtimes/node/versions.json",
		"presets/node/preset.json",
	}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	info, err := st.Stat(t.Context(), "presets/node/preset.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`"%x-%x"`, int64(1700000000123), len(`{"name":"node"}`)); info.ETag != want {
		t.Errorf("ETag = %s, want the reference's %s", info.ETag, want)
	}
	if _, _, err := st.Get(t.Context(), ".tmp/upload-123.tar.gz"); !errors.Is(err, storage.ErrInvalidKey) {
		t.Errorf("Get(.tmp/…) error = %v, want storage.ErrInvalidKey (reserved)", err)
	}
}

func TestReservedNames(t *testing.T) {
	t.Parallel()
	st := newDisk(t, t.TempDir())
	for _, key := range []string{".jig/locks/00.lock", ".tmp/x", "@main/x/.jig-tmp-0011", ".jig-tmp-abc/x"} {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			if err := st.Put(t.Context(), key, strings.NewReader("x"), 1); !errors.Is(err, storage.ErrInvalidKey) {
				t.Errorf("Put(%q) error = %v, want storage.ErrInvalidKey", key, err)
			}
			if _, err := st.Stat(t.Context(), key); !errors.Is(err, storage.ErrInvalidKey) {
				t.Errorf("Stat(%q) error = %v, want storage.ErrInvalidKey", key, err)
			}
		})
	}
	// Names that merely look similar are ordinary keys.
	for _, key := range []string{"@main/x/.jig", "@main/.tmp/a", "@main/x/.jig-tmp", ".jigrc"} {
		if err := st.Put(t.Context(), key, strings.NewReader("x"), 1); err != nil {
			t.Errorf("Put(%q): %v, want nil", key, err)
		}
	}
}

func TestListSkipsTempFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	st := newDisk(t, root)
	if err := st.Put(t.Context(), "@main/a/versions.json", strings.NewReader("{}"), 2); err != nil {
		t.Fatal(err)
	}
	// A writer that crashed mid-Put leaves a temp file behind.
	os.WriteFile(filepath.Join(root, "@main/a/.jig-tmp-deadbeef"), []byte("{"), 0o644)
	os.MkdirAll(filepath.Join(root, ".jig/locks"), 0o755)
	keys, err := st.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"@main/a/versions.json"}, keys); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	dir, err := st.ListDir(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"@main/"}, dir); diff != "" {
		t.Errorf("ListDir (-want +got):\n%s", diff)
	}
	dir, err = st.ListDir(t.Context(), "@main/a/")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"@main/a/versions.json"}, dir); diff != "" {
		t.Errorf("ListDir(@main/a/) (-want +got):\n%s", diff)
	}
}

func TestSymlinks(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644)
	root := t.TempDir()
	st := newDisk(t, root)
	if err := st.Put(t.Context(), "@main/real/versions.json", strings.NewReader("inside"), 6); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(outside, filepath.Join(root, "@evil")))
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "@main", "leak")))
	must(os.Symlink("real", filepath.Join(root, "@main", "alias")))

	for _, key := range []string{"@evil/secret", "@main/leak"} {
		if _, _, err := st.Get(t.Context(), key); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Get(%q) through a link leaving the root: error = %v, want storage.ErrNotFound", key, err)
		}
		if _, err := st.Stat(t.Context(), key); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Stat(%q) through a link leaving the root: error = %v, want storage.ErrNotFound", key, err)
		}
	}
	if err := st.Put(t.Context(), "@evil/planted", strings.NewReader("x"), 1); err == nil {
		t.Errorf("Put through a link leaving the root: error = nil, want an error")
	}
	if _, err := os.Stat(filepath.Join(outside, "planted")); err == nil {
		t.Errorf("Put wrote outside the root")
	}
	// A link that stays inside the root is followed.
	rc, _, err := st.Get(t.Context(), "@main/alias/versions.json")
	if err != nil {
		t.Fatalf("Get through a link inside the root: %v", err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	if string(data) != "inside" {
		t.Errorf("Get through a link inside the root = %q, want %q", data, "inside")
	}
	keys, err := st.List(t.Context(), "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if diff := cmp.Diff([]string{"@main/real/versions.json"}, keys); diff != "" {
		t.Errorf("List (-want +got), links to folders are not walked and links outside are skipped:\n%s", diff)
	}
	dir, err := st.ListDir(t.Context(), "")
	if err != nil {
		t.Fatalf("ListDir: %v", err)
	}
	if diff := cmp.Diff([]string{"@main/"}, dir); diff != "" {
		t.Errorf("ListDir (-want +got):\n%s", diff)
	}
	// Deleting through the link must not touch the outside file.
	st.Delete(t.Context(), "@evil/secret")
	if _, err := os.Stat(filepath.Join(outside, "secret")); err != nil {
		t.Errorf("Delete through a link removed a file outside the root: %v", err)
	}
}

func TestAtomicPutLeavesNoTempFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	st := newDisk(t, root)
	const key = "@main/a/1.0.0/registry.json"
	if err := st.Put(t.Context(), key, strings.NewReader("short"), 99); err == nil {
		t.Fatal("Put with a wrong size: error = nil, want an error")
	}
	if err := st.Put(t.Context(), key, strings.NewReader("ok"), 2); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutIf(t.Context(), key, strings.NewReader("no"), 2, ""); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("PutIf on an existing key: error = %v, want storage.ErrPrecondition", err)
	}
	leftovers := tempFiles(t, root)
	if len(leftovers) != 0 {
		t.Errorf("temp files left behind: %q", leftovers)
	}
}

func TestDeletePrunesEmptyFolders(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	st := newDisk(t, root)
	st.Put(t.Context(), "@gone/a/b/1.0.0/registry.json", strings.NewReader("{}"), 2)
	st.Put(t.Context(), "@kept/x", strings.NewReader("{}"), 2)
	if err := st.Delete(t.Context(), "@gone/a/b/1.0.0/registry.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "@gone")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("emptied namespace folder: stat error = %v, want it removed", err)
	}
	if _, err := os.Stat(root); err != nil {
		t.Errorf("root: %v, want it kept", err)
	}
	// Deleting a folder name is a no-op, not a recursive delete.
	if err := st.Delete(t.Context(), "@kept"); err != nil {
		t.Errorf("Delete(folder) = %v, want nil", err)
	}
	if _, err := st.Stat(t.Context(), "@kept/x"); err != nil {
		t.Errorf("Stat after Delete(folder): %v, want the key kept", err)
	}
}

// TestPutWhileDeletePrunes: Delete removes the folders it empties while
// other writers create keys below them. A Put whose folders vanish
// between two of their levels creates them again rather than failing.
func TestPutWhileDeletePrunes(t *testing.T) {
	t.Parallel()
	st := newDisk(t, t.TempDir())
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				// Every writer shares the upper folders; each key is
				// alone in its own, so each Delete prunes up to a.
				key := fmt.Sprintf("a/b/c/d%d/e/k%d", g, i)
				if err := st.Put(ctx, key, strings.NewReader("x"), 1); err != nil {
					errs <- err
					return
				}
				if _, err := st.PutIf(ctx, key+".lock", strings.NewReader("x"), 1, ""); err != nil {
					errs <- err
					return
				}
				for _, k := range []string{key, key + ".lock"} {
					if err := st.Delete(ctx, k); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestPutIfChangesETagWithinOneMillisecond(t *testing.T) {
	t.Parallel()
	st := newDisk(t, t.TempDir())
	const key = "@main/fast/versions.json"
	etag, err := st.PutIf(t.Context(), key, strings.NewReader("aaaa"), 4, "")
	if err != nil {
		t.Fatal(err)
	}
	// Same size, written back to back: every ETag must still be new.
	seen := map[string]bool{etag: true}
	for i := range 20 {
		body := fmt.Sprintf("%04d", i)
		etag, err = st.PutIf(t.Context(), key, strings.NewReader(body), 4, etag)
		if err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
		if seen[etag] {
			t.Fatalf("update %d: ETag %s was used before", i, etag)
		}
		seen[etag] = true
	}
}

func TestPing(t *testing.T) {
	t.Parallel()
	t.Run("ok", func(t *testing.T) {
		t.Parallel()
		st := newDisk(t, t.TempDir())
		if err := st.Ping(t.Context()); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})
	t.Run("removed", func(t *testing.T) {
		t.Parallel()
		root := filepath.Join(t.TempDir(), "data")
		st := newDisk(t, root)
		os.RemoveAll(root)
		if err := st.Ping(t.Context()); err == nil {
			t.Errorf("Ping after the root was removed: error = nil, want an error")
		}
	})
	t.Run("replaced", func(t *testing.T) {
		t.Parallel()
		root := filepath.Join(t.TempDir(), "data")
		st := newDisk(t, root)
		os.Rename(root, root+".old")
		os.Mkdir(root, 0o755)
		err := st.Ping(t.Context())
		if err == nil || !strings.Contains(err.Error(), "replaced") {
			t.Errorf("Ping after the root was replaced: error = %v, want one saying it was replaced", err)
		}
	})
	t.Run("read-only", func(t *testing.T) {
		t.Parallel()
		if runtime.GOOS == "windows" || os.Geteuid() == 0 {
			t.Skip("permissions do not bind root or Windows")
		}
		root := t.TempDir()
		st := newDisk(t, root)
		os.Chmod(root, 0o555)
		t.Cleanup(func() { os.Chmod(root, 0o755) })
		if err := st.Ping(t.Context()); err == nil {
			t.Errorf("Ping on a read-only root: error = nil, want an error")
		}
	})
}

// The helper process runs when the test binary is started by
// TestPutIfAcrossProcesses.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv("JIG_DISK_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process for TestPutIfAcrossProcesses")
	}
	st := newDisk(t, dir)
	id := os.Getenv("JIG_DISK_HELPER_ID")
	// Create-only race.
	_, err := st.PutIf(t.Context(), "@main/x/1.0.0/registry.json", strings.NewReader("creator "+id), -1, "")
	switch {
	case err == nil:
		fmt.Println("WON")
	case errors.Is(err, storage.ErrPrecondition):
		fmt.Println("LOST")
	default:
		t.Fatalf("PutIf: %v", err)
	}
	// Compare-and-swap increments.
	n, _ := strconv.Atoi(os.Getenv("JIG_DISK_HELPER_INCS"))
	for range n {
		for {
			rc, info, err := st.Get(t.Context(), "@main/x/versions.json")
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(rc)
			rc.Close()
			v, err := strconv.Atoi(string(data))
			if err != nil {
				t.Fatalf("counter %q: %v", data, err)
			}
			next := strconv.Itoa(v + 1)
			if _, err := st.PutIf(t.Context(), "@main/x/versions.json", strings.NewReader(next), int64(len(next)), info.ETag); err == nil {
				break
			} else if !errors.Is(err, storage.ErrPrecondition) {
				t.Fatal(err)
			}
		}
	}
}

// TestPutIfAcrossProcesses runs several processes on one directory: exactly
// one creates the version, and no compare-and-swap increment is lost.
func TestPutIfAcrossProcesses(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("cross-process locking needs flock(2)")
	}
	const (
		procs = 4
		incs  = 15
	)
	dir := t.TempDir()
	st := newDisk(t, dir)
	if err := st.Put(t.Context(), "@main/x/versions.json", strings.NewReader("0"), 1); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	outs := make([]string, procs)
	for i := range procs {
		wg.Go(func() {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHelperProcess$", "-test.v")
			cmd.Env = append(os.Environ(),
				"JIG_DISK_HELPER_DIR="+dir,
				"JIG_DISK_HELPER_ID="+strconv.Itoa(i),
				"JIG_DISK_HELPER_INCS="+strconv.Itoa(incs))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("helper %d: %v\n%s", i, err, out)
			}
			outs[i] = string(out)
		})
	}
	wg.Wait()
	won := regexp.MustCompile(`(?m)^WON$`)
	winners := 0
	for _, out := range outs {
		if won.MatchString(out) {
			winners++
		}
	}
	if winners != 1 {
		t.Errorf("%d processes created the version, want exactly 1; outputs:\n%s", winners, strings.Join(outs, "\n---\n"))
	}
	rc, _, err := st.Get(t.Context(), "@main/x/versions.json")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	if got, want := string(bytes.TrimSpace(data)), strconv.Itoa(procs*incs); got != want {
		t.Errorf("counter = %s, want %s (an update was lost between processes)", got, want)
	}
}

func TestScratchDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	st, err := disk.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dir, err := st.ScratchDir("uploads")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(st.Dir(), ".jig", "uploads"); dir != want {
		t.Errorf("ScratchDir = %q, want %q", dir, want)
	}
	// Whatever is kept there is out of reach of every key.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x.tar.gz"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if keys, err := st.List(t.Context(), ""); err != nil || len(keys) != 0 {
		t.Errorf("List = %q, %v; want no keys", keys, err)
	}
	if children, err := st.ListDir(t.Context(), ""); err != nil || len(children) != 0 {
		t.Errorf("ListDir = %q, %v; want nothing", children, err)
	}
	if _, err := st.Stat(t.Context(), ".jig/uploads/x.tar.gz"); !errors.Is(err, storage.ErrInvalidKey) {
		t.Errorf("Stat of the scratch file: %v, want ErrInvalidKey", err)
	}
	for _, bad := range []string{"", "a/b", "..", "locks", "a b"} {
		if _, err := st.ScratchDir(bad); err == nil {
			t.Errorf("ScratchDir(%q): got nil, want an error", bad)
		}
	}
}

// blockingReader gives one byte, then blocks until release is closed.
type blockingReader struct {
	sent    bool
	release chan struct{}
}

func (r *blockingReader) Read(p []byte) (int, error) {
	if !r.sent {
		r.sent = true
		p[0] = 'x'
		return 1, nil
	}
	<-r.release
	return 0, io.EOF
}

func TestRemoveTemp(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("needs flock(2)")
	}
	root := t.TempDir()
	st, err := disk.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := t.Context()
	// Left by a writer killed halfway: nobody holds its lock.
	dead := filepath.Join(root, "@a", "x", "1.0.0", "files", ".jig-tmp-0123456789abcdef")
	if err := os.MkdirAll(filepath.Dir(dead), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dead, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Being written right now.
	live := &blockingReader{release: make(chan struct{})}
	putErr := make(chan error, 1)
	go func() { putErr <- st.Put(ctx, "@a/x/2.0.0/f.txt", live, -1) }()
	var liveTmp []string
	for len(liveTmp) == 0 {
		liveTmp, _ = filepath.Glob(filepath.Join(root, "@a", "x", "2.0.0", ".jig-tmp-*"))
		time.Sleep(time.Millisecond)
	}

	n, err := st.RemoveTemp(ctx, "@a/x/1.0.0/")
	if err != nil || n != 1 {
		t.Errorf("RemoveTemp of the dead writer's folder = %d, %v; want 1, nil", n, err)
	}
	if _, err := os.Stat(filepath.Join(root, "@a", "x", "1.0.0")); !os.IsNotExist(err) {
		t.Errorf("the emptied folders are still there: %v", err)
	}
	if n, err := st.RemoveTemp(ctx, "@a/x/2.0.0/"); err != nil || n != 0 {
		t.Errorf("RemoveTemp of a live writer's folder = %d, %v; want 0, nil", n, err)
	}
	close(live.release)
	if err := <-putErr; err != nil {
		t.Fatalf("the live Put failed: %v", err)
	}
	if got, err := st.Stat(ctx, "@a/x/2.0.0/f.txt"); err != nil || got.Size != 1 {
		t.Errorf("the live Put's key: %+v, %v; want 1 byte", got, err)
	}
	for _, bad := range []string{"", "@a/x", ".jig/", "../"} {
		if _, err := st.RemoveTemp(ctx, bad); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("RemoveTemp(%q): %v, want ErrInvalidKey", bad, err)
		}
	}
}

// tempFiles returns the temporary files under root, which a finished
// write never leaves.
func tempFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".jig-tmp-") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
