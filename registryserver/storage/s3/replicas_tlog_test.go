package s3_test

import (
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/jigkit/jig/internal/s3test"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registryserver/internal/publish"
)

// TestReplicasAppendLog: two replicas on one bucket publishing different
// versions at once produce one consistent log: every version at exactly
// one index, no gap, every proof verifying against the final checkpoint.
func TestReplicasAppendLog(t *testing.T) {
	t.Parallel()
	s3test.Config(t)
	sts := replicas(t, 2)
	skey, vkey, err := note.GenerateKey(rand.Reader, "log.test")
	if err != nil {
		t.Fatal(err)
	}
	signer, _, err := publish.NewLogSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	const each = 6
	var wg sync.WaitGroup
	start := make(chan struct{})
	for r, st := range sts {
		wg.Go(func() {
			pub := publish.New(st, publish.WithLog(signer))
			<-start
			for i := range each {
				version := fmt.Sprintf("%d.0.%d", r+1, i)
				v := publish.Version{Namespace: "@acme", Segments: []string{"ui-kit"}, Version: version,
					Manifest: []byte(fmt.Sprintf(`{"name":"ui-kit","version":%q}`, version))}
				if err := pub.Publish(t.Context(), v, func(put publish.PutFunc) error {
					return put(t.Context(), "a.txt", int64(len(version)), strings.NewReader(version))
				}); err != nil {
					t.Errorf("replica %d publishing %s: %v", r, version, err)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	_, cp, err := publish.LogCheckpoint(t.Context(), sts[0], "@acme")
	if err != nil {
		t.Fatal(err)
	}
	if cp.Size != 2*each {
		t.Fatalf("log size %d, want %d: a gap or a duplicate", cp.Size, 2*each)
	}
	seen := map[int64]string{}
	for r := range sts {
		for i := range each {
			version := fmt.Sprintf("%d.0.%d", r+1, i)
			l, err := publish.LogLookup(t.Context(), sts[1-r], "@acme", "ui-kit", version, 0)
			if err != nil {
				t.Fatalf("lookup of %s: %v", version, err)
			}
			if other, dup := seen[l.Index]; dup {
				t.Fatalf("index %d holds %s and %s", l.Index, other, version)
			}
			seen[l.Index] = version
			p, err := translog.ParseProof([]byte(l.Proof))
			if err != nil {
				t.Fatal(err)
			}
			if _, got, err := p.Verify(verifier, "log.test/@acme"); err != nil || got != cp {
				t.Fatalf("proof of %s: %v against %v, want %v", version, err, got, cp)
			}
		}
	}
}
