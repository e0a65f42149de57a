package translog_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/translog"
)

func TestParseVersionID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want translog.VersionID
		ok   bool
	}{
		{"@acme/features/ui-kit@1.2.0", translog.VersionID{"@acme", "features/ui-kit", "1.2.0"}, true},
		{"@acme/ui@1.0.0-rc.1+build.5", translog.VersionID{"@acme", "ui", "1.0.0-rc.1+build.5"}, true},
		{"@acme/features/ui-kit", translog.VersionID{}, false},
		{"@acme/features/ui-kit@1.2", translog.VersionID{}, false},
		{"@Acme/ui@1.0.0", translog.VersionID{}, false},
		{"@acme/../ui@1.0.0", translog.VersionID{}, false},
		{"@acme/.git/ui@1.0.0", translog.VersionID{}, false},
		{"@acme/ui@1.0.0:ts", translog.VersionID{}, false},
		{"acme/ui@1.0.0", translog.VersionID{}, false},
		{"@acme/uï@1.0.0", translog.VersionID{}, false},
		{"@acme//ui@1.0.0", translog.VersionID{}, false},
	} {
		got, err := translog.ParseVersionID(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseVersionID(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, translog.ErrMalformed) {
			t.Errorf("ParseVersionID(%q): error %v does not wrap ErrMalformed", tc.in, err)
		}
	}
}

// FuzzParseBatchRequest: an accepted batch lists 1 to MaxBatchVersions
// distinct versions, each valid by the registry grammar and naming itself
// exactly (no path escapes, no case folding), and since sizes only of
// namespaces it names, none negative, and witnesses counts only of
// namespaces it names, each from 1 to MaxCosignatures.
func FuzzParseBatchRequest(f *testing.F) {
	f.Add([]byte(`{"versions":["@acme/features/ui-kit@1.2.0","@main/build/rollup@2.0.0"],"since":{"@acme":41}}`))
	f.Add([]byte(`{"versions":["@acme/ui@1.0.0"]}`))
	f.Add([]byte(`{"versions":["@acme/../ui@1.0.0"]}`))
	f.Add([]byte(`{"versions":["@acme/ui@1.0.0","@acme/ui@1.0.0"]}`))
	f.Add([]byte(`{"versions":["@acme/ui@1.0.0"],"since":{"@other":1}}`))
	f.Add([]byte(`{"versions":["@acme/ui@1.0.0"],"since":{"@acme":3},"witnesses":{"@acme":2}}`))
	f.Add([]byte(`{"versions":["@acme/ui@1.0.0"],"witnesses":{"@acme":33}}`))
	f.Add([]byte(`{"versions":["@acme/ui@1.0.0"],"witnesses":{"@other":1}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, ids, err := translog.ParseBatchRequest(body)
		if err != nil {
			if !errors.Is(err, translog.ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if len(ids) == 0 || len(ids) > translog.MaxBatchVersions || len(ids) != len(req.Versions) {
			t.Fatalf("accepted %d versions", len(ids))
		}
		names := map[string]bool{}
		for i, v := range ids {
			if v.String() != req.Versions[i] || names[v.String()] {
				t.Fatalf("version %q parsed as %v (or twice)", req.Versions[i], v)
			}
			names[v.Namespace] = true
			names[v.String()] = true
			if !registry.ValidNamespace(v.Namespace) || !registry.ValidPath(v.Path) || !registry.ValidVersion(v.Version) {
				t.Fatalf("accepted invalid %v", v)
			}
			for _, seg := range strings.Split(v.Path, "/") {
				if seg == "" || seg == "." || seg == ".." || strings.ToLower(seg) != seg {
					t.Fatalf("accepted path %q", v.Path)
				}
			}
		}
		for ns, n := range req.Since {
			if !names[ns] || n < 0 {
				t.Fatalf("accepted since %q: %d", ns, n)
			}
		}
		for ns, k := range req.Witnesses {
			if !names[ns] || k < 1 || k > translog.MaxCosignatures {
				t.Fatalf("accepted witnesses %q: %d", ns, k)
			}
		}
	})
}

// TestParseBatchRequestWitnesses: how many witnesses a batch requires,
// per namespace it names, from 1 to MaxCosignatures.
func TestParseBatchRequestWitnesses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		witnesses string
		want      string // "" when accepted
	}{
		{`{"@acme":1}`, ""},
		{`{"@acme":32}`, ""},
		{`{"@acme":0}`, "batch lookup: witnesses of @acme: 0 witnesses required, want 1 to 32"},
		{`{"@acme":33}`, "witnesses of @acme: 33 witnesses required, want 1 to 32"},
		{`{"@acme":-1}`, "witnesses of @acme: -1 witnesses required"},
		{`{"@other":2}`, `witnesses names "@other", which no version is of`},
		{`{"@acme":"2"}`, "not a JSON object"},
		{`{"@acme":2.5}`, "not a JSON object"},
	} {
		req, _, err := translog.ParseBatchRequest([]byte(`{"versions":["@acme/ui@1.0.0"],"witnesses":` + tc.witnesses + `}`))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("witnesses %s: %v", tc.witnesses, err)
		case tc.want == "" && len(req.Witnesses) != 1:
			t.Errorf("witnesses %s parsed as %v", tc.witnesses, req.Witnesses)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, translog.ErrMalformed)):
			t.Errorf("witnesses %s: %v, want an ErrMalformed saying %q", tc.witnesses, err, tc.want)
		}
	}
}

// A batch lookup names versions of any namespaces; since gives, per
// namespace, the tree size the caller saw last.
func ExampleParseBatchRequest() {
	_, ids, err := translog.ParseBatchRequest([]byte(`{"versions":["@acme/features/ui-kit@1.2.0","@main/build/rollup@2.0.0"],"since":{"@acme":41}}`))
	fmt.Println(ids, err)
	_, _, err = translog.ParseBatchRequest([]byte(`{"versions":["@acme/features/UI@1.2.0"]}`))
	fmt.Println(err)
	// Output:
	// [@acme/features/ui-kit@1.2.0 @main/build/rollup@2.0.0] <nil>
	// batch lookup: "@acme/features/UI@1.2.0": invalid registry path "features/UI": malformed transparency log data
}
