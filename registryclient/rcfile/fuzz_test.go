package rcfile_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registryclient/rcfile"
)

// FuzzParseConfig checks that any rc file either fails to parse or
// round-trips: parse → marshal → parse gives the same entries, the saved
// headers are exactly the loaded headers (a token never moves into them),
// and marshalling is stable.
func FuzzParseConfig(f *testing.F) {
	files, _ := filepath.Glob("testdata/rc/*.json")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"registries":{"@a":{"url":"","token":"Bearer x","headers":{"Authorization":"Bearer y"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c1, err := rcfile.Parse("rc", data)
		if err != nil {
			return
		}
		out1, err := c1.Marshal()
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		c2, err := rcfile.Parse("rc", out1)
		if err != nil {
			t.Fatalf("reparse of marshalled config failed: %v\n%s", err, out1)
		}
		if diff := cmp.Diff(c1.List(), c2.List()); diff != "" {
			t.Fatalf("namespaces changed on round trip (-first +second):\n%s", diff)
		}
		for _, ns := range c1.List() {
			e1, _ := c1.Get(ns)
			e2, _ := c2.Get(ns)
			if diff := cmp.Diff(e1, e2, cmp.Comparer(func(a, b map[string]string) bool {
				return len(a) == len(b) && (len(a) == 0 || cmp.Equal(a, b))
			})); diff != "" {
				t.Fatalf("entry %s changed on round trip (-first +second):\n%s", ns, diff)
			}
		}
		out2, err := c2.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if string(out1) != string(out2) {
			t.Fatalf("marshal not stable:\n%s\n---\n%s", out1, out2)
		}
		// The token stays in its own field: saved headers are the loaded ones.
		var saved struct {
			Registries map[string]json.RawMessage `json:"registries"`
		}
		if err := json.Unmarshal(out1, &saved); err != nil {
			t.Fatal(err)
		}
		for ns, raw := range saved.Registries {
			var obj struct {
				Headers map[string]string `json:"headers"`
			}
			if json.Unmarshal(raw, &obj) != nil {
				continue // string form
			}
			e, _ := c1.Get(ns)
			for k, v := range obj.Headers {
				if e.Headers[k] != v {
					t.Fatalf("%s: saved header %q=%q was not in the loaded headers", ns, k, v)
				}
				if e.Token != "" && strings.EqualFold(k, "Authorization") && v == "Bearer "+e.Token && e.Headers[k] != v {
					t.Fatalf("%s: token written into headers", ns)
				}
			}
		}
	})
}
