package registry_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
)

func ExampleReprDigest() {
	d := registry.Digest([]byte("hello\n"))
	fmt.Println(d)
	h := registry.ReprDigest(d)
	fmt.Println(h)
	fmt.Println(registry.ParseReprDigest("md5=:x:, "+h) == d)
	// Output:
	// sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03
	// sha-256=:WJG1tSLV3whtD/CxEPvZ0hu0/HFjrzTQgoai6Eb2vgM=:
	// true
}

func TestParseReprDigest(t *testing.T) {
	t.Parallel()
	d := registry.Digest([]byte("x"))
	tests := []struct{ in, want string }{
		{registry.ReprDigest(d), d},
		{"SHA-256 = " + strings.TrimPrefix(registry.ReprDigest(d), "sha-256="), d},
		{"sha-512=:AAAA:", ""},
		{"sha-256=:AAAA:", ""},
		{"sha-256=AAAA", ""},
		{"", ""},
		{"sha-256=:!!:", ""},
	}
	for _, tt := range tests {
		if got := registry.ParseReprDigest(tt.in); got != tt.want {
			t.Errorf("ParseReprDigest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseDigestIndex(t *testing.T) {
	t.Parallel()
	d := registry.Digest(nil)
	good := fmt.Sprintf(`{"namespace":"@main","path":"a/b","version":"1.0.0","manifest":%q,"files":{"t/x.txt":%q}}`, d, d)
	if _, err := registry.ParseDigestIndex([]byte(good)); err != nil {
		t.Fatalf("good index: %v", err)
	}
	bad := []string{
		`{`,
		fmt.Sprintf(`{"namespace":"main","path":"a","version":"1.0.0","manifest":%q}`, d),
		`{"namespace":"@main","path":"a","version":"1.0.0","manifest":"sha256:00"}`,
		fmt.Sprintf(`{"namespace":"@main","path":"a","version":"1.0.0","manifest":%q,"files":{"../x":%q}}`, d, d),
		fmt.Sprintf(`{"namespace":"@main","path":"a","version":"1.0.0","manifest":%q,"files":{"./x":%q}}`, d, d),
		fmt.Sprintf(`{"namespace":"@main","path":"a","version":"1.0.0","manifest":%q,"files":{"x":"SHA256:AB"}}`, d),
	}
	for _, b := range bad {
		if _, err := registry.ParseDigestIndex([]byte(b)); err == nil {
			t.Errorf("ParseDigestIndex(%s): got nil error", b)
		}
	}
	err := &registry.DigestError{What: "@main/a@1.0.0 file x", Want: d, Got: registry.Digest([]byte("y"))}
	if !errors.Is(err, registry.ErrDigestMismatch) || !strings.Contains(err.Error(), d) {
		t.Errorf("DigestError: %v", err)
	}
}

// FuzzParseDigestIndex: an accepted index re-encodes to a document that
// parses to the same index, and every file path is a safe package path.
func FuzzParseDigestIndex(f *testing.F) {
	testenv.AddSeedFiles(f, "testdata/fuzz/digest-index/*.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := registry.ParseDigestIndex(data)
		if err != nil {
			return
		}
		for p := range x.Files {
			if !registry.ValidFilePath(p) || strings.HasPrefix(p, "./") {
				t.Fatalf("unsafe path %q accepted", p)
			}
		}
		b, err := x.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		y, err := registry.ParseDigestIndex(b)
		if err != nil {
			t.Fatalf("re-encoded index does not parse: %v", err)
		}
		b2, _ := y.Marshal()
		if string(b) != string(b2) {
			t.Fatalf("not stable: %s vs %s", b, b2)
		}
	})
}

// FuzzParseReprDigest: whatever parses is a valid digest that formats back
// to a header parsing to the same digest.
func FuzzParseReprDigest(f *testing.F) {
	testenv.AddSeedFiles(f, "testdata/fuzz/repr-digest/*.txt")
	f.Fuzz(func(t *testing.T, b []byte) {
		v := string(b)
		d := registry.ParseReprDigest(v)
		if d == "" {
			return
		}
		if !registry.ValidDigest(d) {
			t.Fatalf("ParseReprDigest(%q) = %q, not a valid digest", v, d)
		}
		if got := registry.ParseReprDigest(registry.ReprDigest(d)); got != d {
			t.Fatalf("round trip of %q: got %q", d, got)
		}
	})
}
