package rcfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/rcfile"
)

func ptr(s string) *string { return &s }

func writeRC(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), ".jigrc")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		file    string // "" = no file
		ns      string
		want    registryclient.Entry
		wantOK  bool
		wantErr string
	}{
		{name: "missing file gives built-in main", ns: "@main", want: registryclient.Entry{URL: rcfile.DefaultRegistryURL}, wantOK: true},
		{name: "missing file gives built-in presets", ns: "@presets", want: registryclient.Entry{URL: rcfile.DefaultRegistryURL}, wantOK: true},
		{name: "missing file unknown namespace", ns: "@x"},
		{name: "string entry", file: `{"registries":{"@oss":"https://oss.example.com"}}`, ns: "@oss", want: registryclient.Entry{URL: "https://oss.example.com"}, wantOK: true},
		{name: "object entry", file: `{"registries":{"@co":{"url":"https://r.example.com","token":"t","headers":{"X-A":"1"}}}}`, ns: "@co",
			want: registryclient.Entry{URL: "https://r.example.com", Token: "t", Headers: map[string]string{"X-A": "1"}}, wantOK: true},
		{name: "file overrides built-in", file: `{"registries":{"@main":"http://127.0.0.1:9"}}`, ns: "@main", want: registryclient.Entry{URL: "http://127.0.0.1:9"}, wantOK: true},
		{name: "no registries key", file: `{"other":1}`, ns: "@main", want: registryclient.Entry{URL: rcfile.DefaultRegistryURL}, wantOK: true},
		{name: "empty file", file: ` `, ns: "@main", want: registryclient.Entry{URL: rcfile.DefaultRegistryURL}, wantOK: true},
		{name: "invalid JSON", file: `{"registries":`, wantErr: "not valid JSON"},
		{name: "not an object", file: `[1]`, wantErr: "not valid JSON"},
		{name: "registries not an object", file: `{"registries":[]}`, wantErr: `"registries" must be an object`},
		{name: "bad key", file: `{"registries":{"main":"http://x"}}`, wantErr: `must be a namespace starting with @`},
		{name: "bad entry", file: `{"registries":{"@x":42}}`, wantErr: `registry @x must be a URL string or an object`},
		{name: "bad header value", file: `{"registries":{"@x":{"url":"http://x","headers":{"A":1}}}}`, wantErr: `registry @x must be`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), ".jigrc")
			if tt.file != "" {
				path = writeRC(t, tt.file)
			}
			cfg, err := rcfile.Load(path)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("got nil error, want one containing %q", tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("got error %q, want it to contain %q and the path %s", err, tt.wantErr, path)
				}
				if !errors.Is(err, registryclient.ErrInvalidConfig) {
					t.Fatalf("got error %v, want it to match ErrInvalidConfig", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, ok := cfg.Get(tt.ns)
			if ok != tt.wantOK {
				t.Fatalf("Get(%s) ok = %v, want %v", tt.ns, ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(registryclient.Entry{}), cmp.FilterPath(func(p cmp.Path) bool {
				return p.Last().String() == ".short"
			}, cmp.Ignore())); diff != "" {
				t.Errorf("Get(%s) mismatch (-want +got):\n%s", tt.ns, diff)
			}
		})
	}
}

func TestConfigSet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		ns      string
		upd     rcfile.Update
		want    registryclient.Entry
		wantErr string
	}{
		{name: "new with url", ns: "@co", upd: rcfile.Update{URL: ptr("https://r.example.com")}, want: registryclient.Entry{URL: "https://r.example.com"}},
		{name: "new needs url", ns: "@new", upd: rcfile.Update{Token: ptr("t")}, wantErr: "--url is required"},
		{name: "nothing given", ns: "@co", upd: rcfile.Update{}, wantErr: "the update changes nothing"},
		{name: "header without value", ns: "@old", upd: rcfile.Update{Headers: map[string]string{"X-A": " "}}, wantErr: `header "X-A" has no value; to remove a header use --remove-header X-A`},
		{name: "header name with colon", ns: "@old", upd: rcfile.Update{Headers: map[string]string{"A:B": "c"}}, wantErr: `header name "A:B" is not a valid HTTP header name`},
		{name: "remove header", ns: "@old", upd: rcfile.Update{RemoveHeaders: []string{"x-a"}},
			want: registryclient.Entry{URL: "http://old.example", Token: "t", Headers: map[string]string{}}},
		{name: "remove authorization clears token", ns: "@old", upd: rcfile.Update{RemoveHeaders: []string{"Authorization"}},
			want: registryclient.Entry{URL: "http://old.example", Headers: map[string]string{"X-A": "1"}}},
		{name: "set and remove", ns: "@old", upd: rcfile.Update{Headers: map[string]string{"X-B": "2"}, RemoveHeaders: []string{"X-A"}},
			want: registryclient.Entry{URL: "http://old.example", Token: "t", Headers: map[string]string{"X-B": "2"}}},
		{name: "remove missing header", ns: "@old", upd: rcfile.Update{RemoveHeaders: []string{"X-Nope"}}, wantErr: `registry @old has no header "X-Nope" to remove (its headers: Authorization, X-A)`},
		{name: "namespace without @", ns: "co", upd: rcfile.Update{URL: ptr("http://x")}, wantErr: "Must start with '@'"},
		{name: "bad scheme", ns: "@co", upd: rcfile.Update{URL: ptr("ftp://x")}, wantErr: "--url must be an absolute http:// or https:// URL"},
		{name: "relative url", ns: "@co", upd: rcfile.Update{URL: ptr("localhost:8080")}, wantErr: "--url must be"},
		{name: "token kept apart", ns: "@old", upd: rcfile.Update{Token: ptr(" t2 ")},
			want: registryclient.Entry{URL: "http://old.example", Token: "t2", Headers: map[string]string{"X-A": "1"}}},
		{name: "headers merged", ns: "@old", upd: rcfile.Update{Headers: map[string]string{"x-b": "2", "X-A": "3"}},
			want: registryclient.Entry{URL: "http://old.example", Token: "t", Headers: map[string]string{"X-A": "3", "x-b": "2"}}},
		{name: "bearer header becomes token", ns: "@old", upd: rcfile.Update{Headers: map[string]string{"Authorization": "Bearer zz"}},
			want: registryclient.Entry{URL: "http://old.example", Token: "zz", Headers: map[string]string{"X-A": "1"}}},
		{name: "built-in gets an entry", ns: "@main", upd: rcfile.Update{Token: ptr("m")},
			want: registryclient.Entry{URL: rcfile.DefaultRegistryURL, Token: "m"}},
		{name: "env url accepted", ns: "@env", upd: rcfile.Update{URL: ptr("${REG_URL}")}, want: registryclient.Entry{URL: "${REG_URL}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := rcfile.Parse("rc", []byte(`{"registries":{"@old":{"url":"http://old.example","token":"t","headers":{"X-A":"1"}}}}`))
			if err != nil {
				t.Fatal(err)
			}
			err = cfg.Set(tt.ns, tt.upd)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := cfg.Get(tt.ns)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("entry mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigRemove(t *testing.T) {
	t.Parallel()
	tests := []struct{ ns, wantErr string }{
		{ns: "@co"},
		{ns: "@main"}, // removes the override: the default comes back
		{ns: "@presets", wantErr: "@presets is built in and has no override in rc to remove; it uses http://localhost:8080"},
		{ns: "@none", wantErr: "Registry '@none' not found"},
		{ns: "co", wantErr: "Must start with '@'"},
	}
	for _, tt := range tests {
		t.Run(tt.ns, func(t *testing.T) {
			t.Parallel()
			cfg, err := rcfile.Parse("rc", []byte(`{"registries":{"@co":"http://x","@main":"http://y"}}`))
			if err != nil {
				t.Fatal(err)
			}
			err = cfg.Remove(tt.ns)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			e, ok := cfg.Get(tt.ns)
			if rcfile.IsBuiltin(tt.ns) {
				if !ok || e.URL != rcfile.DefaultRegistryURL || cfg.HasOverride(tt.ns) {
					t.Errorf("got %s = %+v (override %v), want the default %s back", tt.ns, e, cfg.HasOverride(tt.ns), rcfile.DefaultRegistryURL)
				}
			} else if ok {
				t.Errorf("got %s still configured, want it removed", tt.ns)
			}
		})
	}
}

func TestConfigSave(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", ".jigrc")
	cfg, err := rcfile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Set("@co", rcfile.Update{URL: ptr("https://r.example.com"), Token: ptr("sekret"), Headers: map[string]string{"X-Team": "web"}}); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Save(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o600 {
		t.Errorf("got mode %v, want 0600", got)
	}
	data, _ := os.ReadFile(path)
	want := `{
  "registries": {
    "@co": {
      "url": "https://r.example.com",
      "token": "sekret",
      "headers": {
        "X-Team": "web"
      }
    }
  }
}
`
	if got := string(data); got != want {
		t.Errorf("got file\n%s\nwant\n%s", got, want)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("got %d files in the directory, want only the rc file (no temp files left)", len(entries))
	}
	again, err := rcfile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := again.Get("@co")
	if diff := cmp.Diff(registryclient.Entry{URL: "https://r.example.com", Token: "sekret", Headers: map[string]string{"X-Team": "web"}}, e); diff != "" {
		t.Errorf("reloaded entry mismatch (-want +got):\n%s", diff)
	}
}

func TestConfigSaveKeepsUnknownFieldsAndStrings(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/rc/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rcfile.Parse("rc", data)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cfg.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"telemetry": false`, `"@rack": "https://registry.rackjs.com"`, `"token": "s3cret"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("got\n%s\nwant it to contain %s", out, want)
		}
	}
}

func TestConfigClientExpandsEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REG_HOST": "r.example.com", "TOK": "tok1"}
	cfg, err := rcfile.Parse("rc", []byte(`{"registries":{
		"@ok":{"url":"https://${REG_HOST}/x","token":"${TOK}","headers":{"X-T":"${TOK}-h"}},
		"@missing":{"url":"https://r.example.com","token":"${NOPE_TOKEN}"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.LookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	e, err := cfg.Resolve("@ok")
	if err != nil {
		t.Fatal(err)
	}
	want := registryclient.Entry{URL: "https://r.example.com/x", Token: "tok1", Headers: map[string]string{"X-T": "tok1-h"}}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("Resolved mismatch (-want +got):\n%s", diff)
	}
	c, err := cfg.Client("@ok")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.BaseURL(), "https://r.example.com/x"; got != want {
		t.Errorf("got base URL %q, want %q", got, want)
	}
	_, err = cfg.Client("@missing")
	if err == nil || !strings.Contains(err.Error(), "NOPE_TOKEN") || !strings.Contains(err.Error(), "@missing") {
		t.Errorf("got error %v, want one naming NOPE_TOKEN and @missing", err)
	}
	_, err = cfg.Client("@unknown")
	var nce *registryclient.NotConfiguredError
	if !errors.As(err, &nce) || !errors.Is(err, registryclient.ErrNotConfigured) {
		t.Fatalf("got error %v, want a NotConfiguredError", err)
	}
	if got, want := err.Error(), "No registry configured for namespace @unknown"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestConfigList(t *testing.T) {
	t.Parallel()
	cfg, err := rcfile.Parse("rc", []byte(`{"registries":{"@z":"http://z","@a":"http://a","@main":"http://m"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"@a", "@main", "@presets", "@z"}, cfg.List()); diff != "" {
		t.Errorf("List mismatch (-want +got):\n%s", diff)
	}
}

// TestConfigSetBuiltinWritesURL: setting only a token, headers or a
// default namespace of a built-in namespace writes the URL it uses into
// the file, since the reference reads the same file and fails on an entry
// without one (issue 36, N2; this replaces issue 30 item 12's entry that
// followed $JIG_REGISTRY_URL). An entry an older jig wrote without a URL is
// written back with one.
func TestConfigSetBuiltinWritesURL(t *testing.T) {
	t.Parallel()
	for _, upd := range []rcfile.Update{
		{DefaultNamespace: ptr("@rack")},
		{Token: ptr("t")},
		{Headers: map[string]string{"X-A": "1"}},
	} {
		cfg, err := rcfile.Parse("rc", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Set("@presets", upd); err != nil {
			t.Fatal(err)
		}
		b, err := cfg.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"url": "`+rcfile.DefaultRegistryURL+`"`) {
			t.Errorf("%+v: the entry has no URL:\n%s", upd, b)
		}
		again, err := rcfile.Parse("rc", b)
		if err != nil {
			t.Fatal(err)
		}
		if e, _ := again.Get("@presets"); e.URL != rcfile.DefaultRegistryURL {
			t.Errorf("%+v: got URL %q after a reload, want the built-in %q", upd, e.URL, rcfile.DefaultRegistryURL)
		}
	}
	old, err := rcfile.Parse("rc", []byte(`{"registries": {"@main": {"token": "abc"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := old.Marshal(); !strings.Contains(string(b), `"url": "`+rcfile.DefaultRegistryURL+`"`) {
		t.Errorf("an entry read without a URL was written without one:\n%s", b)
	}
	// --url pins it.
	cfg, _ := rcfile.Parse("rc", nil)
	if err := cfg.Set("@presets", rcfile.Update{URL: ptr("https://pinned.example"), DefaultNamespace: ptr("@rack")}); err != nil {
		t.Fatal(err)
	}
	if b, _ := cfg.Marshal(); !strings.Contains(string(b), `"url": "https://pinned.example"`) {
		t.Errorf("--url was not stored:\n%s", b)
	}
	// A namespace that is not built in still needs a URL.
	if err := cfg.Set("@other", rcfile.Update{Token: ptr("t")}); err == nil || !strings.Contains(err.Error(), "--url is required") {
		t.Errorf("got %v, want --url is required", err)
	}
}

// TestConfigDefaultNamespace: the rc entry's defaultNamespace is read,
// validated, set ("rack" and "@rack" alike), cleared with "", and written
// only when set.
func TestConfigDefaultNamespace(t *testing.T) {
	t.Parallel()
	cfg, err := rcfile.Parse("rc", []byte(`{"registries":{"@presets":{"url":"http://x","defaultNamespace":"@rack"},"@a":"http://a"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := cfg.Get("@presets"); e.DefaultNamespace != "@rack" {
		t.Errorf("Get(@presets).DefaultNamespace = %q, want @rack", e.DefaultNamespace)
	}
	if err := cfg.Set("@a", rcfile.Update{DefaultNamespace: ptr("rack")}); err != nil {
		t.Fatal(err)
	}
	out, err := cfg.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), `"defaultNamespace": "@rack"`); n != 2 {
		t.Errorf("marshalled rc file has %d defaultNamespace fields, want 2:\n%s", n, out)
	}
	if err := cfg.Set("@a", rcfile.Update{DefaultNamespace: ptr("")}); err != nil {
		t.Fatal(err)
	}
	if e, _ := cfg.Get("@a"); e.DefaultNamespace != "" {
		t.Errorf("after clearing: DefaultNamespace = %q, want none", e.DefaultNamespace)
	}
	for _, bad := range []string{"@presets", "presets", "@Rack", "@rack/x", "../x"} {
		if err := cfg.Set("@a", rcfile.Update{DefaultNamespace: ptr(bad)}); err == nil {
			t.Errorf("Set(DefaultNamespace %q): got no error", bad)
		}
	}
	for _, bad := range []string{`"@presets"`, `"rack"`, `"@Rack"`, `7`} {
		rc := `{"registries":{"@p":{"url":"http://x","defaultNamespace":` + bad + `}}}`
		if _, err := rcfile.Parse("rc", []byte(rc)); !errors.Is(err, registryclient.ErrInvalidConfig) {
			t.Errorf("rc with defaultNamespace %s: error %v, want ErrInvalidConfig", bad, err)
		}
	}
}

// TestSourcesReadDefaultNamespaceOfUnresolvedEntry: an entry whose token
// names an unset variable still gives its default namespace (a
// [registryclient.Resolver]'s Get needs no expansion); only a client for
// it fails, naming the variable.
func TestSourcesReadDefaultNamespaceOfUnresolvedEntry(t *testing.T) {
	t.Parallel()
	cfg, err := rcfile.Parse("rc", []byte(`{"registries":{
		"@main":{"url":"http://127.0.0.1:1","token":"${JIG_TEST_UNSET}","defaultNamespace":"@rack"},
		"@rack":"http://127.0.0.1:1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.LookupEnv = func(string) (string, bool) { return "", false }
	src := cfg.Sources()
	id, err := src.ParseID(t.Context(), "runtimes/node")
	if err != nil || id.Namespace != "@rack" {
		t.Errorf("ParseID(runtimes/node) = %v, %v; want @rack/runtimes/node", id, err)
	}
	_, err = src.Client("@main")
	var env *rcfile.EnvNotSetError
	if !errors.As(err, &env) || env.Var != "JIG_TEST_UNSET" || !errors.Is(err, registryclient.ErrInvalidConfig) {
		t.Errorf("Client(@main) error %v, want an EnvNotSetError for JIG_TEST_UNSET", err)
	}
}
