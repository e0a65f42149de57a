package registry_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
)

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
