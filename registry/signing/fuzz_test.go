package signing_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry/signing"
)

// seeds returns the files of testdata/<dir>.
func seeds(f *testing.F, dir string) {
	f.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzParseSignature checks that a parsed signature re-parses from its
// canonical armor to the same key and armor, and never verifies over
// content it was not made for.
func FuzzParseSignature(f *testing.F) {
	seeds(f, "signatures")
	f.Fuzz(func(t *testing.T, data []byte) {
		sig, err := signing.ParseSignature(data)
		if err != nil {
			return
		}
		again, err := signing.ParseSignature(sig.Armored)
		if err != nil {
			t.Fatalf("canonical armor does not re-parse: %v", err)
		}
		if !bytes.Equal(again.Armored, sig.Armored) || again.Fingerprint != sig.Fingerprint {
			t.Fatalf("re-parse changed the signature: %s vs %s", again.Fingerprint, sig.Fingerprint)
		}
		if sig.Verify([]byte("not the signed index")) == nil {
			t.Fatal("signature verifies over arbitrary content")
		}
	})
}

// FuzzParseAllowedSigners checks that parsing is unaffected by CRLF line
// ends, that each entry comes from a non-comment line and has a key, and
// that parsing stays fast.
func FuzzParseAllowedSigners(f *testing.F) {
	seeds(f, "allowed_signers")
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := signing.ParseAllowedSigners(data)
		crlf, errCRLF := signing.ParseAllowedSigners(bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")))
		if (err == nil) != (errCRLF == nil) && !bytes.Contains(data, []byte("\r")) && len(data)*2 < signing.MaxAllowedSignersSize {
			t.Fatalf("CRLF changed the outcome: %v vs %v", err, errCRLF)
		}
		if err != nil {
			return
		}
		lines := strings.Split(string(data), "\n")
		for _, e := range a.Entries() {
			if e.Key == nil || e.Fingerprint != signing.Fingerprint(e.Key) || e.Principals == "" {
				t.Fatalf("incomplete entry %+v", e)
			}
			if e.Line < 1 || e.Line > len(lines) {
				t.Fatalf("entry line %d out of range", e.Line)
			}
			l := strings.TrimLeft(lines[e.Line-1], " \t")
			if l == "" || l[0] == '#' {
				t.Fatalf("entry from a blank or comment line %d", e.Line)
			}
			if _, ok := a.Find(e.Key); !ok {
				t.Fatal("Find misses a listed key")
			}
		}
		if errCRLF == nil && len(crlf.Entries()) != len(a.Entries()) {
			t.Fatalf("CRLF changed the entries: %d vs %d", len(crlf.Entries()), len(a.Entries()))
		}
	})
}
