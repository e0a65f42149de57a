package registry_test

import (
	"bufio"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

func FuzzParseID(f *testing.F) {
	file, err := os.Open("testdata/ids.txt")
	if err != nil {
		f.Fatal(err)
	}
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		f.Add(sc.Text())
	}
	file.Close()
	f.Fuzz(func(t *testing.T, s string) {
		id, err := registry.ParseID(s)
		if err != nil {
			var ie *registry.IDError
			if !errors.As(err, &ie) || !errors.Is(err, registry.ErrInvalidID) {
				t.Fatalf("ParseID(%q): error %v is not an *IDError wrapping ErrInvalidID", s, err)
			}
			return
		}
		if !registry.ValidNamespace(id.Namespace) || !registry.ValidPath(id.Path) {
			t.Fatalf("ParseID(%q) = %+v: invalid namespace or path accepted", s, id)
		}
		if id.Version != "" && !registry.ValidVersion(id.Version) {
			t.Fatalf("ParseID(%q) = %+v: invalid version accepted", s, id)
		}
		if id.Language != "" && id.Language != registry.LangTS && id.Language != registry.LangJS {
			t.Fatalf("ParseID(%q) = %+v: unknown language accepted", s, id)
		}
		// Round trip: the canonical string parses back to the same ID.
		again, err := registry.ParseID(id.String())
		if err != nil {
			t.Fatalf("ParseID(%q).String() = %q does not parse: %v", s, id.String(), err)
		}
		if again != id {
			t.Fatalf("round trip of %q: got %+v, want %+v", s, again, id)
		}
		if !strings.HasPrefix(id.String(), id.Key()) {
			t.Fatalf("String %q does not start with Key %q", id.String(), id.Key())
		}
		// The key never climbs out of its namespace folder.
		for _, seg := range id.Segments() {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("ParseID(%q): segment %q", s, seg)
			}
		}
	})
}
