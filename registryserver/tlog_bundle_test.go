package registryserver_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/bundle"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/cache"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/bundleio"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// rewriteBundle rewrites a bundle's entries with edit (nil drops the
// entry), as someone who holds the file can: a bundle manifest is only a
// list of digests, made again.
func rewriteBundle(t *testing.T, data []byte, edit func(name string, b []byte) []byte) []byte {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(data))
	var buf bytes.Buffer
	var w *bundle.Writer
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		if hdr.Name == bundle.ManifestName {
			continue
		}
		if w == nil {
			w = bundle.NewWriter(&buf, strings.SplitN(hdr.Name, "/", 2)[0])
		}
		if b = edit(hdr.Name, b); b == nil {
			continue
		}
		if err := w.Add(hdr.Name, int64(len(b)), bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestBundleLogProofs: mirror export carries each logged version's
// offline proof; an air-gapped server imports the bundle only when every
// proof verifies with the exporting server's log key (a tampered proof,
// record or a missing proof refuses the whole bundle, nothing written),
// logs the versions in its own log, and a client that trusts the original
// key verifies a bundle into its cache, and the versions offline after.
func TestBundleLogProofs(t *testing.T) {
	t.Parallel()
	src := memory.New()
	h, vkey := logServer(t, src)
	mustPublish(t, h, "@gated", "1.0.0")
	mustPublish(t, h, "@gated", "1.2.0")
	data := export(t, src, bundleio.ExportOptions{Namespace: "@gated"})
	b := readBundle(t, data)
	for _, v := range b.Versions {
		if v.LogProof == nil {
			t.Fatalf("%s: no log proof in the bundle", v.ID())
		}
	}
	skeyB, _, err := registryserver.GenerateLogKey("airgap.test")
	if err != nil {
		t.Fatal(err)
	}
	_, otherKey, _ := registryserver.GenerateLogKey("log.test")

	proofOf := layout.LogProof("@gated", "features/ui-kit", "1.2.0")
	flipHash := func(name string, b []byte) []byte {
		if name != proofOf {
			return b
		}
		lines := strings.Split(string(b), "\n")
		h := []byte(lines[3]) // the first proof hash: another valid base64 first letter
		if h[0] == 'A' {
			h[0] = 'B'
		} else {
			h[0] = 'A'
		}
		lines[3] = string(h)
		return []byte(strings.Join(lines, "\n"))
	}
	otherRecord := func(name string, b []byte) []byte {
		if name != proofOf {
			return b
		}
		p, _ := translog.ParseProof(b)
		rec, _ := translog.ParseRecord(p.Record)
		rec.IndexDigest = registry.Digest([]byte("evil"))
		p.Record, _ = rec.Marshal()
		return p.Marshal()
	}
	dropProof := func(name string, b []byte) []byte {
		if name == proofOf {
			return nil
		}
		return b
	}
	for _, tc := range []struct {
		name     string
		edit     func(string, []byte) []byte
		verifier string
		readErr  string // bundle.Read refuses
		want     string // "" imports
	}{
		{"as exported", nil, vkey, "", ""},
		{"no verifier: proofs not checked", flipHash, "", "", ""},
		{"tampered proof hash", flipHash, vkey, "", "does not verify"},
		{"tampered record", otherRecord, vkey, "its log proof's record names digest index", ""},
		{"proof missing", dropProof, vkey, "", "carries no transparency-log proof"},
		{"another key", nil, otherKey, "", "does not verify"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := data
			if tc.edit != nil {
				d = rewriteBundle(t, data, tc.edit)
			}
			tb, err := bundle.Read(bytes.NewReader(d), int64(len(d)), bundle.Limits{})
			if tc.readErr != "" {
				if !errors.Is(err, bundle.ErrInvalid) || !strings.Contains(err.Error(), tc.readErr) {
					t.Fatalf("bundle.Read = %v, want %q", err, tc.readErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			dst := memory.New()
			before := snapshot(t, dst)
			_, err = bundleio.Import(t.Context(), dst, tb, bundleio.ImportOptions{LogKey: skeyB, LogVerifier: tc.verifier})
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("import = %v, want an error with %q", err, tc.want)
				}
				if after := snapshot(t, dst); !maps.Equal(before, after) {
					t.Errorf("a refused import wrote %d keys", len(after)-len(before))
				}
				return
			}
			if err != nil {
				t.Fatalf("import = %v", err)
			}
			// The air-gapped server logged the versions in its own log.
			if _, err := publish.LogLookup(t.Context(), dst, "@gated", "features/ui-kit", "1.2.0", 0); err != nil {
				t.Errorf("the importing server's log: %v", err)
			}
		})
	}

	// A client trusting the original key fills its cache from the
	// bundle without the network, then verifies the version offline.
	dir := t.TempDir()
	ch, err := cache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	client := func() *registryclient.Client {
		c, err := registryclient.New("http://127.0.0.1:9", registryclient.WithNamespace("@gated"), registryclient.WithCache(ch),
			registryclient.WithMode(registryclient.Offline), registryclient.WithTrust(&registryclient.Trust{Log: vkey}))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tampered := readBundle(t, rewriteBundle(t, data, flipHash))
	if _, err := client().ImportBundle(t.Context(), tampered, "tampered.tar"); !errors.Is(err, registryclient.ErrLog) {
		t.Fatalf("client import of a tampered proof = %v, want a log refusal", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "logs.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused bundle left logs.json: %v", err)
	}
	if _, err := client().ImportBundle(t.Context(), b, "gated.tar"); err != nil {
		t.Fatalf("client import = %v", err)
	}
	c := client()
	if _, err := c.Digests(t.Context(), registry.MustParseID("@gated/features/ui-kit@1.2.0")); err != nil {
		t.Fatalf("offline read after the import = %v", err)
	}
	if i, ok := c.LogIndex(registry.MustParseID("@gated/features/ui-kit@1.2.0"), ""); !ok || i != 1 {
		t.Errorf("LogIndex = %d, %v; want 1", i, ok)
	}
}
