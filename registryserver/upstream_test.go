package registryserver_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryserver"
)

func TestParseUpstreams(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TOK": "s3cret", "HOST": "registry.example.com"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c, err := registryserver.ParseUpstreams([]byte(`{"upstreams":[
		{"url":"https://${HOST}/base/","token":"${TOK}","headers":{"x-team":"a ${TOK}"},"namespaces":{"@public":"@main","@presets":"@presets"},"timeout":"5s"},
		{"url":"http://other:8080","namespaces":{"@tools":"@tools"}}]}`), lookup)
	if err != nil {
		t.Fatal(err)
	}
	ups := c.Upstreams()
	if len(ups) != 2 {
		t.Fatalf("got %d upstreams, want 2", len(ups))
	}
	u := ups[0]
	if u.URL != "https://registry.example.com/base" || u.Token != "s3cret" || u.Headers["X-Team"] != "a s3cret" ||
		u.Namespaces["@public"] != "@main" || u.Timeout != 5*time.Second {
		t.Errorf("got %+v", u)
	}
	if ups[1].Timeout != registryserver.DefaultUpstreamTimeout {
		t.Errorf("default timeout: got %v", ups[1].Timeout)
	}
	if got := strings.Join(c.Namespaces(), ","); got != "@presets,@public,@tools" || !c.Serves("@tools") || c.Serves("@main") {
		t.Errorf("Namespaces() = %s", got)
	}

	for _, tc := range []struct{ name, doc, want string }{
		{"not JSON", `{`, "not an upstreams document"},
		{"unknown top-level field", `{"upstreams":[],"x":1}`, `unknown field "x"`},
		{"unknown entry field", `{"upstreams":[{"url":"http://a","namespaces":{"@a":"@a"},"tokn":"x"}]}`, `unknown field "tokn"`},
		{"duplicate key", `{"upstreams":[{"url":"http://a","namespaces":{"@a":"@a","@a":"@b"}}]}`, "twice"},
		{"no upstreams", `{"upstreams":[]}`, "lists no upstream"},
		{"missing url", `{"upstreams":[{"namespaces":{"@a":"@a"}}]}`, `"url" is missing`},
		{"bad scheme", `{"upstreams":[{"url":"ftp://a","namespaces":{"@a":"@a"}}]}`, "not an absolute http"},
		{"relative url", `{"upstreams":[{"url":"registry.example.com","namespaces":{"@a":"@a"}}]}`, "not an absolute http"},
		{"credentials in url", `{"upstreams":[{"url":"https://u:pw@a","namespaces":{"@a":"@a"}}]}`, "carries credentials"},
		{"query", `{"upstreams":[{"url":"https://a/?x=1","namespaces":{"@a":"@a"}}]}`, "query or fragment"},
		{"token in query", `{"upstreams":[{"url":"https://a/?access_token=s3cret","namespaces":{"@a":"@a"}}]}`, "query or fragment"},
		{"password in url", `{"upstreams":[{"url":"https://u:s3cret@a","namespaces":{"@a":"@a"}}]}`, "carries credentials"},
		{"unset variable", `{"upstreams":[{"url":"https://a","token":"${NOPE}","namespaces":{"@a":"@a"}}]}`, "${NOPE}, which is not set"},
		{"token and authorization", `{"upstreams":[{"url":"https://a","token":"t","headers":{"authorization":"x"},"namespaces":{"@a":"@a"}}]}`, `both "token" and a Authorization header`},
		{"bad header name", `{"upstreams":[{"url":"https://a","headers":{"a b":"x"},"namespaces":{"@a":"@a"}}]}`, "not a header name"},
		{"no namespaces", `{"upstreams":[{"url":"https://a"}]}`, `"namespaces" is empty`},
		{"bad local namespace", `{"upstreams":[{"url":"https://a","namespaces":{"main":"@main"}}]}`, `"main" is not a namespace`},
		{"bad remote namespace", `{"upstreams":[{"url":"https://a","namespaces":{"@a":"@A"}}]}`, `"@A" upstream`},
		{"renamed presets", `{"upstreams":[{"url":"https://a","namespaces":{"@presets":"@main"}}]}`, "presets are not renamed"},
		{"duplicate namespace", `{"upstreams":[{"url":"https://a","namespaces":{"@a":"@a"}},{"url":"https://b","namespaces":{"@a":"@x"}}]}`, "already served by upstream https://a"},
		{"bad timeout", `{"upstreams":[{"url":"https://a","namespaces":{"@a":"@a"},"timeout":"forever"}]}`, `timeout "forever"`},
		{"negative timeout", `{"upstreams":[{"url":"https://a","namespaces":{"@a":"@a"},"timeout":"-1s"}]}`, `timeout "-1s"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := registryserver.ParseUpstreams([]byte(tc.doc), lookup)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error shows a token: %v", err)
			}
		})
	}
}

func TestLoadUpstreams(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "upstreams.json")
	if err := os.WriteFile(p, []byte(`{"upstreams":[{"url":"https://a","namespaces":{"@x":"@a"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := registryserver.LoadUpstreams(p); err != nil || !c.Serves("@x") {
		t.Errorf("LoadUpstreams: %v", err)
	}
	if _, err := registryserver.LoadUpstreams(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "reading the upstreams file") {
		t.Errorf("missing file: got %v", err)
	}
	if err := os.WriteFile(p, []byte(`{"upstreams":[{"url":"https://a"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := registryserver.LoadUpstreams(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("bad file: got %v, want an error naming %s", err, p)
	}
}

// FuzzParseUpstreams: whatever the file, a parsed configuration holds
// only absolute http(s) URLs without credentials, valid namespaces each
// served by one upstream, and positive timeouts; and no error shows the
// token.
func FuzzParseUpstreams(f *testing.F) {
	entries, err := os.ReadDir(filepath.Join("testdata", "upstreams"))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("testdata", "upstreams", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	const secret = "tok-5ecret"
	lookup := func(k string) (string, bool) {
		if k == "UPSTREAM_TOKEN" {
			return secret, true
		}
		return "", false
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := registryserver.ParseUpstreams(data, lookup)
		if err != nil {
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the error shows the token: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, u := range c.Upstreams() {
			pu, err := url.Parse(u.URL)
			if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" || pu.User != nil || pu.RawQuery != "" || pu.Fragment != "" {
				t.Fatalf("accepted URL %q", u.URL)
			}
			if u.Timeout <= 0 {
				t.Fatalf("accepted timeout %v", u.Timeout)
			}
			if len(u.Namespaces) == 0 {
				t.Fatal("accepted an upstream without namespaces")
			}
			for local, remote := range u.Namespaces {
				if seen[local] {
					t.Fatalf("%s served twice", local)
				}
				seen[local] = true
				if local == registry.PresetNamespace || remote == registry.PresetNamespace {
					if local != remote {
						t.Fatalf("accepted %s -> %s", local, remote)
					}
					continue
				}
				if !registry.ValidNamespace(local) || !registry.ValidNamespace(remote) {
					t.Fatalf("accepted %q -> %q", local, remote)
				}
				if !c.Serves(local) {
					t.Fatalf("Serves(%s) is false", local)
				}
			}
		}
	})
}

func TestUpstreamURLErrorsHideCredentials(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		`{"upstreams":[{"url":"https://user:pa55word@a b/x","namespaces":{"@a":"@a"}}]}`,
		`{"upstreams":[{"url":"ftp://user:pa55word@a/x","namespaces":{"@a":"@a"}}]}`,
		`{"upstreams":[{"url":"https://user:pa55word@a/x","namespaces":{"@a":"@a"}}]}`,
	} {
		_, err := registryserver.ParseUpstreams([]byte(doc), nil)
		if err == nil || strings.Contains(err.Error(), "pa55word") {
			t.Errorf("%s: got %v, want an error without the password", doc, err)
		}
	}
}
