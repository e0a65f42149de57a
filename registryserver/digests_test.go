package registryserver_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	pt "github.com/jigkit/jig/internal/pkgarchive/pkgarchivetest"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func reprOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha-256=:" + base64.StdEncoding.EncodeToString(s[:]) + ":"
}

// A version written by hand (or by the reference) has no stored index:
// the server computes it from the stored bytes on first use, serves it at
// …/<version>/digests and as Repr-Digest on identity responses.
func TestDigestIndexComputedForHandWrittenVersions(t *testing.T) {
	t.Parallel()
	h := newHandler(t)
	resp := do(h, http.MethodGet, "/registries/@main/runtimes/node/1.1.0/digests", nil)
	body := readBody(t, resp)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("digests: got %d %s", resp.StatusCode, body)
	}
	if got := resp.Header.Get("Cache-Control"); got != tierImmutable {
		t.Errorf("Cache-Control: got %q, want %q", got, tierImmutable)
	}
	idx, err := registry.ParseDigestIndex(body)
	if err != nil {
		t.Fatal(err)
	}
	want := &registry.DigestIndex{
		Namespace: "@main", Path: "runtimes/node", Version: "1.1.0",
		Manifest: registry.Digest([]byte(manifest("@main", "node", "1.1.0", true))),
		Files: map[string]string{
			"templates/.gitignore": registry.Digest([]byte("node_modules\n")),
			"templates/big.ts":     registry.Digest([]byte(bigTS)),
			"templates/logo.png":   registry.Digest([]byte("\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 2048))),
			"templates/noext":      registry.Digest([]byte("plain words\n")),
		},
	}
	if diff := cmp.Diff(want, idx); diff != "" {
		t.Errorf("index (-want +got):\n%s", diff)
	}
	for _, path := range []string{
		"/registries/@main/runtimes/node",
		"/registries/@main/runtimes/node/1.1.0",
		"/registries/@main/runtimes/node/1.1.0/files/templates/big.ts",
		"/registries/@main/runtimes/node/1.1.0/files/templates/noext",
		"/registries/@main/runtimes/node/1.1.0/files/templates/logo.png",
	} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			resp := do(h, method, path, nil)
			body := readBody(t, resp)
			got := resp.Header.Get("Repr-Digest")
			if method == http.MethodGet && got != reprOf(body) {
				t.Errorf("GET %s: Repr-Digest %q, want %q", path, got, reprOf(body))
			}
			if method == http.MethodHead && got == "" {
				t.Errorf("HEAD %s: no Repr-Digest", path)
			}
		}
		// A content coding changes the representation: its Repr-Digest
		// would be that of the encoded bytes, so none is sent.
		resp := do(h, http.MethodGet, path, map[string]string{"Accept-Encoding": "gzip"})
		if resp.Header.Get("Content-Encoding") != "" && resp.Header.Get("Repr-Digest") != "" {
			t.Errorf("GET %s gzip: Repr-Digest %q on an encoded response", path, resp.Header.Get("Repr-Digest"))
		}
	}
}

func TestDigestIndexAccess(t *testing.T) {
	t.Parallel()
	h := newHandler(t)
	tests := []struct {
		path, token string
		status      int
		code        string
	}{
		{"/registries/@gated/secret/thing/1.0.0/digests", "", 401, "UNAUTHORIZED"},
		{"/registries/@gated/secret/thing/1.0.0/digests", "read-tok", 200, ""},
		{"/registries/@undeclared/x/1.0.0/digests", "", 401, "UNAUTHORIZED"},
		{"/registries/@main/runtimes/node/9.9.9/digests", "", 404, "NOT_FOUND"},
		{"/registries/@main/runtimes/node/1.1.0/digests/x", "", 400, "INVALID_PATH"},
	}
	for _, tt := range tests {
		var hdr map[string]string
		if tt.token != "" {
			hdr = bearer(tt.token)
		}
		resp := do(h, http.MethodGet, tt.path, hdr)
		body := readBody(t, resp)
		if resp.StatusCode != tt.status || (tt.code != "" && !strings.Contains(string(body), `"code":"`+tt.code+`"`)) {
			t.Errorf("GET %s: got %d %s, want %d %s", tt.path, resp.StatusCode, body, tt.status, tt.code)
		}
	}
}

// A published version's index is stored at publish time; a file changed in
// storage afterwards keeps the published digest, so clients detect it.
func TestDigestIndexPublishedAndTampered(t *testing.T) {
	t.Parallel()
	st := memory.New()
	h := publishHandler(t, st)
	manifest := regJSON("@public", "1.0.0", "")
	if r := post(t, h, pubAdmin, form{archive: pkg(manifest)}); r.status != http.StatusCreated {
		t.Fatalf("publish: got %d %s", r.status, r.body)
	}
	status, body := get(t, h, "/registries/@public/features/ui-kit/1.0.0/digests", "")
	if status != http.StatusOK {
		t.Fatalf("digests: got %d %s", status, body)
	}
	idx, err := registry.ParseDigestIndex(body)
	if err != nil {
		t.Fatal(err)
	}
	if idx.Manifest != registry.Digest([]byte(manifest)) || idx.Files["templates/a.txt"] != registry.Digest([]byte("hello\n")) {
		t.Errorf("index: got %+v", idx)
	}
	// The stored index is not served as a file of the version.
	if status, _ := get(t, h, "/registries/@public/features/ui-kit/1.0.0/files/"+layout.DigestIndexFile, ""); status != http.StatusNotFound {
		t.Errorf("index as a file: got %d, want 404", status)
	}
	if err := st.Put(t.Context(), "@public/features/ui-kit/1.0.0/templates/a.txt", strings.NewReader("evil\n"), 5); err != nil {
		t.Fatal(err)
	}
	resp := do(h, http.MethodGet, "/registries/@public/features/ui-kit/1.0.0/files/templates/a.txt", nil)
	got := readBody(t, resp)
	if string(got) != "evil\n" || resp.Header.Get("Repr-Digest") != reprOf([]byte("hello\n")) {
		t.Errorf("tampered file: body %q Repr-Digest %q, want the published digest %q", got, resp.Header.Get("Repr-Digest"), reprOf([]byte("hello\n")))
	}
	// A package may not declare the index's name.
	r := post(t, h, pubAdmin, form{archive: pt.Build(0, pt.File("registry.json",
		`{"name":"ui-kit","namespace":"@public","type":"registry:feature","version":"2.0.0","priority":1,"files":[{"target":"x","type":"registry:lib","path":".jig-digests.json"}]}`),
		pt.File(".jig-digests.json", "{}"))})
	if r.status != http.StatusBadRequest || r.Code != "UNSAFE_FILE" {
		t.Errorf("declaring %s: got %d %s %s, want 400 UNSAFE_FILE", layout.DigestIndexFile, r.status, r.Code, r.Msg)
	}
}
