package registryclient_test

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/cache"
)

// writeManyFiles writes, in dir, a registry of n declared files of size
// bytes of random text each (bench/publish.sh's registry) as version.
func writeManyFiles(tb testing.TB, dir, version string, n, size int) {
	tb.Helper()
	rnd := rand.New(rand.NewPCG(1, 2))
	raw := make([]byte, size*3/4+3)
	var files strings.Builder
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		for j := range raw {
			raw[j] = byte(rnd.Uint32())
		}
		body := base64.StdEncoding.EncodeToString(raw)[:size]
		if err := os.WriteFile(filepath.Join(dir, "templates", fmt.Sprintf("f%d.txt", i)), []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
		if i > 0 {
			files.WriteString(",")
		}
		fmt.Fprintf(&files, `{"target":"many/f%d.txt","type":"registry:docs","path":"templates/f%d.txt"}`, i, i)
	}
	manifest := fmt.Sprintf(`{"name":"many","namespace":"@acme","path":"many/many","type":"registry:feature","version":%q,"priority":4,"files":[%s]}`, version, files.String())
	if err := os.WriteFile(filepath.Join(dir, "registry.json"), []byte(manifest), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkPublishPrepare500 is what jig publish does before it uploads a
// version of 500 files of 2 KiB, the registry bench/publish.sh publishes:
// open reads and packs the directory and runs the server's checks
// ([registryclient.OpenPackage]); impact compares the package with the
// previous version, published on a real server and whose files the
// client's cache holds ([registryclient.Client.Impact]).
func BenchmarkPublishPrepare500(b *testing.B) {
	b.Run("open", func(b *testing.B) {
		dir := b.TempDir()
		writeManyFiles(b, dir, "1.0.0", 500, 2048)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := registryclient.OpenPackage(dir); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impact", func(b *testing.B) {
		dir := b.TempDir()
		writeManyFiles(b, dir, "1.0.0", 500, 2048)
		srv := pubServer(b)
		ch, err := cache.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		cl, err := registryclient.New(srv.URL, registryclient.WithToken(pubPublishTok), registryclient.WithCache(ch))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := cl.Publish(b.Context(), dir); err != nil {
			b.Fatal(err)
		}
		writeManyFiles(b, dir, "1.0.1", 500, 2048)
		pkg, err := registryclient.OpenPackage(dir)
		if err != nil {
			b.Fatal(err)
		}
		// The first comparison downloads the previous version's files
		// into the cache, as jig publish's first one does.
		if _, err := cl.Impact(b.Context(), pkg); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			// A new client each time, as each jig publish is a process
			// of its own: only the cache on disk is shared.
			cl, err := registryclient.New(srv.URL, registryclient.WithToken(pubPublishTok), registryclient.WithCache(ch))
			if err != nil {
				b.Fatal(err)
			}
			rep, err := cl.Impact(b.Context(), pkg)
			if err != nil {
				b.Fatal(err)
			}
			if rep == nil || !rep.OK {
				b.Fatalf("impact report %+v, want an OK one", rep)
			}
		}
	})
}
