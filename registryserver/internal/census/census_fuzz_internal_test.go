package census

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry/wire"
)

// FuzzParseCensusReport checks the report parser's properties: what it
// accepts has a project without http credentials, valid entries within the
// limits, and parses again to the same report.
func FuzzParseCensusReport(f *testing.F) {
	f.Add([]byte(`{"project":"https://u:p@h/x.git","registries":[{"path":"a/b","version":"1.0.0","state":"modified","drifted":["z","a","z"]}]}`))
	f.Add([]byte(`{"project":"p","registries":[]}`))
	f.Add([]byte(`{"project":"\u0000\u001b[31m","registries":[{"path":"x","version":"1.0.0-rc.1","state":"clean"}]}`))
	f.Add([]byte(`[[[[`))
	f.Add([]byte(`{"project":"p","registries":[{"path":"x","version":"1.0.0","state":"modified","drifted":["b","a"],"notTaken":[{"target":"b","side":"ours","changes":2},{"target":"a","side":"base","changes":1}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := parseCensusReport(data)
		if err != nil {
			return
		}
		if rep.Project == "" || len(rep.Registries) > wire.MaxCensusRegistries {
			t.Fatalf("accepted %q", data)
		}
		for _, r := range rep.Registries {
			for _, n := range r.NotTaken {
				if !slices.Contains(r.Drifted, n.Target) || n.Changes < 1 || n.Changes > wire.MaxCensusChanges {
					t.Fatalf("accepted not-taken %+v of %+v", n, r)
				}
			}
		}
		if scheme, rest, ok := strings.Cut(strings.ToLower(rep.Project), "://"); ok && (scheme == "http" || scheme == "https") {
			authority, _, _ := strings.Cut(rest, "/")
			if strings.Contains(authority, "@") || strings.ContainsAny(rest, "?#") {
				t.Fatalf("credentials kept in %q", rep.Project)
			}
		}
		again, _ := json.Marshal(rep)
		rep2, err := parseCensusReport(again)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", again, err)
		}
		again2, _ := json.Marshal(rep2)
		if string(again) != string(again2) {
			t.Fatalf("not stable: %s vs %s", again, again2)
		}
	})
}
