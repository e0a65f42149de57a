package registryserver_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryserver"
)

func loadAuth(t testing.TB, name string) *registryserver.AuthConfig {
	t.Helper()
	a, err := registryserver.LoadAuthConfig(filepath.Join("testdata", "auth", name))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestParseAuthConfigRejects(t *testing.T) {
	t.Parallel()
	a := loadAuth(t, "gated.json")
	var got []string
	for _, w := range a.Warnings() {
		var ae *registryserver.AuthEntryError
		if !errors.As(w, &ae) {
			t.Fatalf("warning %v is not an *AuthEntryError", w)
		}
		got = append(got, ae.Namespace)
	}
	want := []string{"@bad-expiry", "@broken", "@not-array", "Bad Key"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rejected namespaces (-want +got):\n%s", diff)
	}
	for _, ns := range []string{"@main", "@gated"} {
		if !a.Declared(ns) {
			t.Errorf("Declared(%q) = false, want true", ns)
		}
	}
	for _, ns := range []string{"@broken", "@bad-expiry", "@nope"} {
		if a.Declared(ns) {
			t.Errorf("Declared(%q) = true, want false", ns)
		}
	}

	edge := loadAuth(t, "edge.json")
	if got, want := len(edge.Warnings()), 4; got != want {
		t.Errorf("edge.json: got %d warnings (%v), want %d", got, edge.Warnings(), want)
	}
	if !edge.Declared("@e") {
		t.Errorf("edge.json: a date-only expiresAt must be accepted")
	}
}

func TestParseAuthConfigErrors(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{"", "[]", "null", "{", `"x"`} {
		if _, err := registryserver.ParseAuthConfig([]byte(doc)); err == nil {
			t.Errorf("ParseAuthConfig(%q): got nil error, want one", doc)
		}
	}
	// A key twice in one object fails closed, at every level, naming the
	// key: readers disagree on which of the two counts.
	for doc, want := range map[string]string{
		`{"@team":[{"tokenSha256":"` + strings.Repeat("ab", 32) + `"}], "@team":[]}`: `auth.json: the key "@team" appears twice at the top level`,
		`{"@team":[{"token":"a","publish":false,"publish":true}]}`:                   `the key "publish" appears twice in /@team/0`,
		`{"@team":[{"token":"a","Token":"b"}]}`:                                      `the key "Token" appears twice in /@team/0`,
	} {
		_, err := registryserver.ParseAuthConfig([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseAuthConfig(%s): got %v, want an error containing %q", doc, err, want)
		}
	}
	_, err := registryserver.LoadAuthConfig(filepath.Join(t.TempDir(), "missing.json"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadAuthConfig(missing): got %v, want an error wrapping fs.ErrNotExist", err)
	}
}

func TestAuthorize(t *testing.T) {
	t.Parallel()
	a := loadAuth(t, "gated.json")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		ns, token string
		at        time.Time
		want      registryserver.Grant
		err       error
	}{
		{"@main", "", now, registryserver.Grant{Public: true}, nil},
		{"@main", "anything", now, registryserver.Grant{Public: true}, nil},
		{"@gated", "", now, registryserver.Grant{}, registryserver.ErrTokenRequired},
		{"@gated", "wrong", now, registryserver.Grant{}, registryserver.ErrInvalidToken},
		{"@gated", "read-tok", now, registryserver.Grant{Mark: "read only"}, nil},
		{"@gated", "pub-tok", now, registryserver.Grant{Publish: true, Mark: "ci"}, nil},
		{"@gated", "old-tok", now, registryserver.Grant{}, registryserver.ErrTokenExpired},
		{"@gated", "old-tok", time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC), registryserver.Grant{}, nil},
		{"@gated", "future-tok", now, registryserver.Grant{}, nil},
		{"@gated", "future-tok", time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), registryserver.Grant{}, registryserver.ErrTokenExpired},
		// Undeclared (or rejected) namespaces answer exactly as gated ones
		// do for a token that does not open them.
		{"@broken", "", now, registryserver.Grant{}, registryserver.ErrTokenRequired},
		{"@undeclared", "", now, registryserver.Grant{}, registryserver.ErrTokenRequired},
		{"@undeclared", "wrong", now, registryserver.Grant{}, registryserver.ErrInvalidToken},
		{"@undeclared", "read-tok", now, registryserver.Grant{}, registryserver.ErrForbiddenNamespace},
		{"@undeclared", "old-tok", now, registryserver.Grant{}, registryserver.ErrTokenExpired},
	}
	for _, tt := range tests {
		t.Run(tt.ns+"/"+tt.token, func(t *testing.T) {
			t.Parallel()
			got, err := a.Authorize(tt.ns, tt.token, tt.at)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Authorize(%q, %q): got error %v, want %v", tt.ns, tt.token, err, tt.err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Authorize(%q, %q) (-want +got):\n%s", tt.ns, tt.token, diff)
			}
		})
	}
	var none *registryserver.AuthConfig
	if g, err := none.Authorize("@anything", "", now); err != nil || !g.Public || g.Publish {
		t.Errorf("nil AuthConfig: got %+v, %v, want a public grant without publish", g, err)
	}
}

func FuzzParseAuthConfig(f *testing.F) {
	entries, err := os.ReadDir(filepath.Join("testdata", "auth"))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("testdata", "auth", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "@gated", "read-tok")
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, doc []byte, ns, token string) {
		a, err := registryserver.ParseAuthConfig(doc)
		if err != nil {
			if a != nil {
				t.Fatalf("ParseAuthConfig returned a config and an error")
			}
			return
		}
		for _, w := range a.Warnings() {
			var ae *registryserver.AuthEntryError
			if !errors.As(w, &ae) || a.Declared(ae.Namespace) {
				t.Fatalf("warning %v: namespace must be rejected, not declared", w)
			}
		}
		g, err := a.Authorize(ns, token, now)
		switch {
		case err == nil && !registry.ValidNamespace(ns):
			t.Fatalf("Authorize(%q) succeeded for an invalid namespace", ns)
		case err == nil && !a.Declared(ns):
			t.Fatalf("Authorize(%q) succeeded for an undeclared namespace", ns)
		case err != nil && (g != registryserver.Grant{}):
			t.Fatalf("Authorize(%q) returned grant %+v with error %v", ns, g, err)
		case err == nil && g.Public && g.Publish:
			t.Fatalf("Authorize(%q): a public grant must not allow publishing", ns)
		case err == nil && !g.Public && token == "":
			t.Fatalf("Authorize(%q) opened a gated namespace without a token", ns)
		}
	})
}

// TestParseAuthConfigCensus: "census" is an optional list of namespaces;
// anything else rejects the entry's namespace, saying what to write.
func TestParseAuthConfigCensus(t *testing.T) {
	t.Parallel()
	for census, ok := range map[string]bool{
		`null`:                                  true,
		`[]`:                                    true,
		`["@team", "@main"]`:                    true,
		`"@team"`:                               false,
		`true`:                                  false,
		`["@Team"]`:                             false,
		`["team"]`:                              false,
		`["@team", 1]`:                          false,
		`[["@team"]]`:                           false,
		`{"@team": true}`:                       false,
		`["@team/x"]`:                           false,
		`["@te\u0000am"]`:                       false,
		`["@` + strings.Repeat("a", 300) + `"]`: true,
	} {
		a, err := registryserver.ParseAuthConfig([]byte(`{"@team": [{"token": "t", "census": ` + census + `}], "@main": []}`))
		if err != nil {
			t.Fatalf("census %s: %v", census, err)
		}
		if got := a.Declared("@team"); got != ok {
			t.Errorf("census %s: @team declared %v, want %v (warnings %v)", census, got, ok, a.Warnings())
		}
		if !ok && (len(a.Warnings()) != 1 || !strings.Contains(a.Warnings()[0].Error(), `such as ["@team", "@main"]`)) {
			t.Errorf("census %s: warnings %v, want one saying what census holds", census, a.Warnings())
		}
	}
}
