package registryclient_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/bundle"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/cache"
)

// oneVersion returns a bundle of @main/tools/one@1.0.0 whose file holds
// content, signed by keys.
func oneVersion(t *testing.T, content string, keys ...testKey) []byte {
	t.Helper()
	file, man := []byte(content), []byte(`{"name":"one","namespace":"@main","type":"registry:feature","version":"1.0.0","files":[{"target":"one.txt","type":"registry:file","path":"one.txt"}]}`)
	idx, err := (&registry.DigestIndex{Namespace: "@main", Path: "tools/one", Version: "1.0.0", Manifest: registry.Digest(man),
		Files: map[string]string{"one.txt": registry.Digest(file)}}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	entries := [][2]string{
		{layout.DigestIndex("@main", "tools/one", "1.0.0"), string(idx)},
	}
	if len(keys) > 0 {
		doc := wire.Signatures{Namespace: "@main", Path: "tools/one", Version: "1.0.0"}
		for _, k := range keys {
			a, err := signing.Sign(k.signer, idx)
			if err != nil {
				t.Fatal(err)
			}
			doc.Signatures = append(doc.Signatures, wire.SignatureInfo{Signature: string(a), Key: k.line, Fingerprint: k.fp})
		}
		b, _ := json.Marshal(doc)
		entries = append(entries, [2]string{layout.Signatures("@main", "tools/one", "1.0.0"), string(b)})
	}
	entries = append(entries,
		[2]string{layout.File("@main", "tools/one", "1.0.0", "one.txt"), string(file)},
		[2]string{layout.Manifest("@main", "tools/one", "1.0.0"), string(man)})
	var buf bytes.Buffer
	w := bundle.NewWriter(&buf, "@main")
	for _, e := range entries {
		if err := w.Add(e[0], int64(len(e[1])), strings.NewReader(e[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readB(t *testing.T, data []byte) *bundle.Bundle {
	t.Helper()
	b, err := bundle.Read(bytes.NewReader(data), int64(len(data)), bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestImportBundleOffline: a cache filled from a bundle serves an offline
// client; a conflicting bundle is refused with nothing written; the cache
// exports the same bundle.
func TestImportBundleOffline(t *testing.T) {
	t.Parallel()
	ch, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Offline: the server is never asked, whatever it is.
	c, err := registryclient.New("http://127.0.0.1:9", registryclient.WithCache(ch), registryclient.WithMode(registryclient.Offline))
	if err != nil {
		t.Fatal(err)
	}
	data := oneVersion(t, "one\n")
	res, err := c.ImportBundle(t.Context(), readB(t, data), "test.bundle")
	if err != nil || len(res.Versions) != 1 || len(res.Skipped) != 0 {
		t.Fatalf("got %+v, %v; want one version imported", res, err)
	}
	m, err := c.Manifest(t.Context(), registry.MustParseID("@main/tools/one"))
	if err != nil || m.Version != "1.0.0" {
		t.Fatalf("offline manifest: got %v, %v", m, err)
	}
	f, err := c.File(t.Context(), registry.MustParseID("@main/tools/one@1.0.0"), "one.txt")
	if err != nil || string(f) != "one\n" {
		t.Fatalf("offline file: got %q, %v", f, err)
	}
	if res, err := c.ImportBundle(t.Context(), readB(t, data), "test.bundle"); err != nil || len(res.Skipped) != 1 {
		t.Fatalf("re-import: got %+v, %v; want it skipped", res, err)
	}
	before, _ := ch.List()
	_, err = c.ImportBundle(t.Context(), readB(t, oneVersion(t, "other\n")), "test.bundle")
	var ce *registryclient.BundleConflictError
	var co *registryclient.CachedOtherError
	if !errors.As(err, &ce) || !errors.As(err, &co) || co.Version != "@main/tools/one@1.0.0" || !strings.Contains(err.Error(), "@main/tools/one@1.0.0 is cached from http://127.0.0.1:9 with other content") {
		t.Fatalf("got %v, want a conflict", err)
	}
	after, _ := ch.List()
	if len(before) != len(after) {
		t.Errorf("a refused import changed the cache: %d entries, then %d", len(before), len(after))
	}
	var out bytes.Buffer
	if _, err := c.ExportBundle(t.Context(), &out, "main"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), data) {
		t.Error("the cache exports another bundle than the one imported")
	}
	// A client without a cache has nothing to fill.
	plain, _ := registryclient.New("http://127.0.0.1:9")
	if _, err := plain.ImportBundle(t.Context(), readB(t, data), "test.bundle"); err == nil {
		t.Error("a client without a cache imported a bundle")
	}
}

// TestImportBundleRollback: the signed-versions memory, which outlives
// jig cache clean, refuses a bundle whose version was seen signed with
// other content, or comes unsigned; nothing is written.
func TestImportBundleRollback(t *testing.T) {
	t.Parallel()
	alice := newTestKey(t)
	ch, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	trusted := &registryclient.Trust{Keys: []registryclient.TrustedKey{{Principal: "alice@example.com", Key: alice.line}}}
	c, _ := trustClient(t, "http://127.0.0.1:9", ch, trusted, registryclient.WithMode(registryclient.Offline))
	if _, err := c.ImportBundle(t.Context(), readB(t, oneVersion(t, "one\n", alice)), "test.bundle"); err != nil {
		t.Fatal(err)
	}
	if err := ch.Clean(); err != nil {
		t.Fatal(err)
	}
	for name, tt := range map[string]struct {
		data []byte
		want string
	}{
		"re-signed":     {oneVersion(t, "two\n", alice), "was signed with"},
		"signature cut": {oneVersion(t, "one\n"), "no longer signed by a trusted key"},
	} {
		_, err := c.ImportBundle(t.Context(), readB(t, tt.data), "test.bundle")
		if !errors.Is(err, registryclient.ErrRollback) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "nothing was written") {
			t.Errorf("%s: got %v, want a rollback refused (%s)", name, err, tt.want)
		}
		if es, _ := ch.List(); len(es) != 0 {
			t.Errorf("%s: a refused import wrote %v", name, es)
		}
	}
}
