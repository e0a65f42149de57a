package registryserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registryserver"
)

// TestDefaultNamespaceAdvertised: GET /namespaces names the configured
// default namespace to callers who may read it, and only to them: for
// everyone else (and without the option) the response is byte for byte,
// header for header, what it was without the option, so a gated default
// namespace is never revealed.
func TestDefaultNamespaceAdvertised(t *testing.T) {
	t.Parallel()
	plain := newHandler(t)
	for _, tc := range []struct {
		name, ns string
		hdr      map[string]string
		want     string // the defaultNamespace field, "" for absent
	}{
		{"public anonymous", "@main", nil, "@main"},
		{"public token", "@main", bearer("read-tok"), "@main"},
		{"gated anonymous", "@gated", nil, ""},
		{"gated bad token", "@gated", bearer("nope"), ""},
		{"gated expired token", "@gated", bearer("old-tok"), ""},
		{"gated read token", "@gated", bearer("read-tok"), "@gated"},
		{"gated admin", "@gated", bearer(adminToken), "@gated"},
		{"undeclared anonymous", "@undeclared", nil, ""},
		{"undeclared read token", "@undeclared", bearer("read-tok"), ""},
		{"undeclared admin", "@undeclared", bearer(adminToken), "@undeclared"},
		{"neither stored nor declared", "@rack", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHandler(t, registryserver.WithDefaultNamespace(tc.ns))
			got := do(h, "GET", "/namespaces", tc.hdr)
			want := do(plain, "GET", "/namespaces", tc.hdr)
			gotBody, wantBody := string(readBody(t, got)), string(readBody(t, want))
			if got.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200", got.StatusCode)
			}
			if tc.want == "" {
				if gotBody != wantBody {
					t.Errorf("body %s, want it unchanged: %s", gotBody, wantBody)
				}
			} else {
				wantWith := strings.TrimSuffix(wantBody, "}") + `,"defaultNamespace":"` + tc.want + `"}`
				if gotBody != wantWith {
					t.Errorf("body %s, want %s", gotBody, wantWith)
				}
			}
			for _, k := range []string{"Cache-Control", "Vary", "Content-Type"} {
				if diff := cmp.Diff(want.Header.Values(k), got.Header.Values(k)); diff != "" {
					t.Errorf("%s differs from the response without the option (-without +with):\n%s", k, diff)
				}
			}
		})
	}
}

// TestDefaultNamespaceOption: the option takes a namespace other than
// @presets, with its "@"; "" means none.
func TestDefaultNamespaceOption(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ns string
		ok bool
	}{
		{"@rack", true},
		{"", true},
		{"rack", false},
		{"@presets", false},
		{"@Rack", false},
		{"@rack/x", false},
		{"@", false},
	} {
		h, err := registryserver.New(registryserver.WithDefaultNamespace(tc.ns))
		if (err == nil) != tc.ok {
			t.Errorf("WithDefaultNamespace(%q): error %v, want ok=%v", tc.ns, err, tc.ok)
		}
		if h != nil {
			h.Close()
		}
	}
}
