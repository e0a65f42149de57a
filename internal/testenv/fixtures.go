package testenv

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/registryserver/storage/memory"
)

// MemoryStorage returns an in-memory storage holding objects (storage key
// → content), such as a catalog laid out as the reference's disk storage.
func MemoryStorage(t testing.TB, objects map[string]string) *memory.Storage {
	t.Helper()
	st := memory.New()
	for k, v := range objects {
		if err := st.Put(context.Background(), k, strings.NewReader(v), int64(len(v))); err != nil {
			t.Fatalf("store %s: %v", k, err)
		}
	}
	return st
}

// Snapshot records every directory, symbolic link and file below dir (dir
// itself as ".") with its mode and content, for a test to assert that a
// command left a tree byte-identical: a directory maps to "dir <mode>", a
// link to "link <target>", a file to "<mode> <content>", anything else (a
// FIFO) to "special <mode>". A dir that does
// not exist gives an empty map; any other error fails the test.
func Snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			out[rel] = "dir " + info.Mode().String()
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link " + target
		case !info.Mode().IsRegular():
			out[rel] = "special " + info.Mode().String() // a FIFO is not opened
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = info.Mode().String() + " " + string(b)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

// MustJSON is v encoded as JSON; an error fails the test.
func MustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %T as JSON: %v", v, err)
	}
	return b
}

// Trickle is a handler that answers 200 with a JSON content type and then
// sends one byte of body every interval, until the client goes away: a
// server whose body never ends, for idle-timeout tests.
func Trickle(interval time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(interval):
			}
			if _, err := w.Write([]byte(" ")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
}

// WriteFiles writes each file (a slash-separated path below dir → its
// content) with mode 0644, creating the folders it needs.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// RetainedHeap returns how many bytes of heap the value f returns keeps
// reachable: the live heap after f less the live heap before, each read
// after two collections (the second frees what the first only moved out
// of sync.Pools, such as encoding/json's buffers). Benchmarks report it
// as a memory figure per item; it is exact only when nothing else
// allocates meanwhile.
func RetainedHeap(f func() any) int64 {
	live := func() int64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	before := live()
	v := f()
	after := live()
	runtime.KeepAlive(v)
	return after - before
}
