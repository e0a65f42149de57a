package authfile_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jigkit/jig/internal/authfile"
)

func Example() {
	d, err := authfile.Parse([]byte(`{"issuers": [], "@team": [{"tokenSha256": "ab"}], "@main": []}`))
	if err != nil {
		panic(err)
	}
	entries, _ := d.Entries("@team")
	_ = d.SetEntries("@team", append(entries, json.RawMessage(`{"tokenSha256": "cd", "scopes": ["publish"]}`)))
	fmt.Print(string(d.Bytes()))
	// Output:
	// {
	//   "issuers": [],
	//   "@team": [
	//     {"tokenSha256":"ab"},
	//     {"tokenSha256":"cd","scopes":["publish"]}
	//   ],
	//   "@main": []
	// }
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for _, in := range []string{``, `[]`, `null`, `{"@a": [], "@a": []}`, `{"@a": []} {}`, `{"@a": [}`} {
		if _, err := authfile.Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q): got no error", in)
		}
	}
}

// TestEditFailureLeavesFile: a change or check that fails, and an editor
// that finds the file locked, leave the file byte-identical.
func TestEditFailureLeavesFile(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "auth.json")
	orig := []byte("{\"@main\": [ ] }")
	if err := os.WriteFile(p, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	add := func(d *authfile.Doc) error { return d.SetEntries("@x", nil) }
	if err := authfile.Edit(t.Context(), p, false, func(*authfile.Doc) error { return boom }, nil); !errors.Is(err, boom) {
		t.Errorf("change failing: got %v", err)
	}
	if err := authfile.Edit(t.Context(), p, false, add, func([]byte) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("check failing: got %v", err)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, orig) {
		t.Errorf("file changed: %s", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	for _, e := range entries {
		if e.Name() != "auth.json" && e.Name() != ".auth.json.lock" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if err := authfile.Edit(t.Context(), filepath.Join(t.TempDir(), "none.json"), false, add, nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file without create: got %v, want ErrNotExist", err)
	}
}

// FuzzParse: whatever Parse accepts, Bytes writes a document that parses
// to the same members (values equal as JSON).
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.json")
	for _, s := range seeds {
		b, _ := os.ReadFile(s)
		f.Add(b)
	}
	f.Add([]byte(`{"@a": [{"token": "x"}], "issuers": [{"issuer": "https://x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := authfile.Parse(data)
		if err != nil {
			return
		}
		out := d.Bytes()
		d2, err := authfile.Parse(out)
		if err != nil {
			t.Fatalf("Bytes wrote what Parse refuses: %v\n%s", err, out)
		}
		if len(d.Members) != len(d2.Members) {
			t.Fatalf("members: got %d, want %d", len(d2.Members), len(d.Members))
		}
		for i := range d.Members {
			if d.Members[i].Key != d2.Members[i].Key || !sameJSON(d.Members[i].Value, d2.Members[i].Value) {
				t.Fatalf("member %d: got %s=%s, want %s=%s", i, d2.Members[i].Key, d2.Members[i].Value, d.Members[i].Key, d.Members[i].Value)
			}
		}
	})
}

func sameJSON(a, b []byte) bool {
	var x, y bytes.Buffer
	return json.Compact(&x, a) == nil && json.Compact(&y, b) == nil && bytes.Equal(x.Bytes(), y.Bytes())
}
