package registryserver_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// mtimeETag matches a storage ETag "<mtime-ms hex>-<size hex>[-enc]".
var mtimeETag = regexp.MustCompile(`^"[0-9a-f]+-([0-9a-f]+(?:-[a-z]+)?)"$`)

var updateGolden = flag.Bool("update", false, "rewrite the golden files: testdata/wire-golden.txt, testdata/webcatalog/*.html")

// TestWireBytesPinned pins the status, headers and body bytes of the
// routes the reference's clients use, so additions (Repr-Digest, the
// digest index route) cannot change what they receive. Headers that vary
// by run (Date, rate-limit counters) and the added Repr-Digest are left
// out; everything else must match testdata/wire-golden.txt byte for byte.
// Regenerate with: go test -run TestWireBytesPinned -update.
func TestWireBytesPinned(t *testing.T) {
	h := newHandler(t)
	type req struct {
		method, path string
		hdr          map[string]string
	}
	gz := map[string]string{"Accept-Encoding": "gzip"}
	br := map[string]string{"Accept-Encoding": "br;q=1, gzip;q=0.5"}
	reqs := []req{
		{"GET", "/registries/@main/runtimes/node", nil},
		{"GET", "/registries/@main/runtimes/node", gz},
		{"HEAD", "/registries/@main/runtimes/node", nil},
		{"GET", "/registries/@main/runtimes/node/versions", nil},
		{"GET", "/registries/@main/runtimes/node/1.0.0", nil},
		{"GET", "/registries/@main/runtimes/node/1.1.0", br},
		{"GET", "/registries/@main/runtimes/node/1.1.0/files/templates/.gitignore", nil},
		{"GET", "/registries/@main/runtimes/node/1.1.0/files/templates/big.ts", nil},
		{"GET", "/registries/@main/runtimes/node/1.1.0/files/templates/big.ts", gz},
		{"HEAD", "/registries/@main/runtimes/node/1.1.0/files/templates/big.ts", nil},
		{"GET", "/registries/@main/runtimes/node/1.1.0/files/templates/logo.png", nil},
		{"GET", "/registries/@main/runtimes/node/1.1.0/files/templates/noext", nil},
		{"GET", "/registries/@main/runtimes/node/1.1.0/files/templates/missing", nil},
		{"GET", "/registries/@main/runtimes/node/9.9.9", nil},
		{"GET", "/registries/@main/empty", nil},
		{"GET", "/registries/@main/a/1.0.0/other", nil},
		{"GET", "/registries/@gated/secret/thing", nil},
		{"GET", "/registries/@gated/secret/thing/1.0.0", bearer("read-tok")},
		{"GET", "/registries/@gated/secret/thing/1.0.0/files/templates/.gitignore", bearer("read-tok")},
		{"GET", "/registries/@undeclared/x", nil},
		{"GET", "/namespaces", nil},
		{"GET", "/namespaces/@main/registries", nil},
		{"GET", "/presets/node", nil},
	}
	var b strings.Builder
	for _, r := range reqs {
		resp := do(h, r.method, r.path, r.hdr)
		body := readBody(t, resp)
		hk := make([]string, 0, len(r.hdr))
		for k, v := range r.hdr {
			hk = append(hk, k+": "+v)
		}
		sort.Strings(hk)
		fmt.Fprintf(&b, "=== %s %s %s\n%d\n", r.method, r.path, strings.Join(hk, "; "), resp.StatusCode)
		keys := make([]string, 0, len(resp.Header))
		for k := range resp.Header {
			switch {
			case k == "Date", k == "Repr-Digest", strings.HasPrefix(k, "Ratelimit-"):
				continue
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := strings.Join(resp.Header[k], ", ")
			// The fixture's modification times differ per run.
			switch k {
			case "Last-Modified":
				v = "<mtime>"
			case "Etag":
				v = mtimeETag.ReplaceAllString(v, `"<mtime>-$1"`)
			}
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
		fmt.Fprintf(&b, "body %s\n", strconv.Quote(string(body)))
	}
	got := b.String()
	golden := filepath.Join("testdata", "wire-golden.txt")
	if *updateGolden {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("wire bytes changed at line %d:\n got: %s\nwant: %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("wire bytes changed: got %d lines, want %d", len(gl), len(wl))
	}
}
