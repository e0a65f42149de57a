package registryserver_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// evilVersion is one version an upstream under test serves:
// @main/features/x@1.0.0, with a digest index computed from what it
// serves unless index is set.
type evilVersion struct {
	manifest string
	files    map[string]string
	index    string                                            // served as is when not ""
	sigs     string                                            // served as is when not ""
	hook     func(w http.ResponseWriter, r *http.Request) bool // true: answered
}

const evilBase = "/registries/@main/features/x"

func evilManifest(files ...string) string {
	var fs []string
	for i, f := range files {
		fs = append(fs, fmt.Sprintf(`{"target":"t%d.txt","type":"registry:config","path":%q}`, i, f))
	}
	return `{"name":"x","namespace":"@main","type":"registry:feature","version":"1.0.0","priority":1,"description":"x","files":[` + strings.Join(fs, ",") + `]}`
}

func (v *evilVersion) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if v.hook != nil && v.hook(w, r) {
		return
	}
	p := r.URL.Path
	switch {
	case p == evilBase+"/versions":
		fmt.Fprint(w, `{"versions":["1.0.0"]}`)
	case p == evilBase+"/1.0.0":
		fmt.Fprint(w, v.manifest)
	case p == evilBase+"/1.0.0/digests":
		if v.index != "" {
			fmt.Fprint(w, v.index)
			return
		}
		idx := registry.DigestIndex{Namespace: "@main", Path: "features/x", Version: "1.0.0", Manifest: registry.Digest([]byte(v.manifest)), Files: map[string]string{}}
		for name, b := range v.files {
			idx.Files[name] = registry.Digest([]byte(b))
		}
		b, _ := idx.Marshal()
		w.Write(b)
	case p == evilBase+"/1.0.0/signatures":
		if v.sigs == "" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, v.sigs)
	case strings.HasPrefix(p, evilBase+"/1.0.0/files/"):
		b, ok := v.files[strings.TrimPrefix(p, evilBase+"/1.0.0/files/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, b)
	default:
		http.NotFound(w, r)
	}
}

// TestMirrorRefusesBadUpstream: a malicious or broken upstream gets
// nothing into the mirror's storage: each answer below is refused with
// 504 UPSTREAM_UNAVAILABLE and no key under the namespace.
func TestMirrorRefusesBadUpstream(t *testing.T) {
	t.Parallel()
	var elsewhereHits atomic.Int64
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhereHits.Add(1)
		fmt.Fprint(w, "redirected content")
	}))
	t.Cleanup(elsewhere.Close)
	good := func() *evilVersion {
		return &evilVersion{manifest: evilManifest("templates/a.txt"), files: map[string]string{"templates/a.txt": "hello\n"}}
	}
	deep := strings.Repeat("d/", 300) + "x.txt"
	cases := []struct {
		name    string
		v       *evilVersion
		timeout string
		opts    []registryserver.Option
	}{
		{name: "wrong file digest", v: func() *evilVersion {
			v := good()
			idx := registry.DigestIndex{Namespace: "@main", Path: "features/x", Version: "1.0.0", Manifest: registry.Digest([]byte(v.manifest)),
				Files: map[string]string{"templates/a.txt": registry.Digest([]byte("other"))}}
			b, _ := idx.Marshal()
			v.index = string(b)
			return v
		}()},
		{name: "wrong manifest digest", v: func() *evilVersion {
			v := good()
			idx := registry.DigestIndex{Namespace: "@main", Path: "features/x", Version: "1.0.0", Manifest: registry.Digest([]byte("{}")),
				Files: map[string]string{"templates/a.txt": registry.Digest([]byte("hello\n"))}}
			b, _ := idx.Marshal()
			v.index = string(b)
			return v
		}()},
		{name: "index lists an undeclared file", v: func() *evilVersion {
			v := good()
			idx := registry.DigestIndex{Namespace: "@main", Path: "features/x", Version: "1.0.0", Manifest: registry.Digest([]byte(v.manifest)),
				Files: map[string]string{"templates/a.txt": registry.Digest([]byte("hello\n")), "extra": registry.Digest(nil)}}
			b, _ := idx.Marshal()
			v.index = string(b)
			return v
		}()},
		{name: "manifest of another namespace", v: &evilVersion{
			manifest: strings.Replace(evilManifest("templates/a.txt"), `"@main"`, `"@other"`, 1), files: map[string]string{"templates/a.txt": "hello\n"}}},
		{name: "huge file", v: &evilVersion{manifest: evilManifest("big.bin"), files: map[string]string{"big.bin": strings.Repeat("z", 8<<10)}},
			opts: []registryserver.Option{registryserver.WithUploadLimits(registryserver.UploadLimits{MaxUnpackedSize: 4 << 10})}},
		{name: "deep path", v: &evilVersion{manifest: evilManifest(deep), files: map[string]string{deep: "x"}}},
		{name: "escaping path", v: &evilVersion{manifest: evilManifest("../../etc/passwd"), files: map[string]string{"../../etc/passwd": "x"}}},
		{name: ".git path", v: &evilVersion{manifest: evilManifest(".git/config"), files: map[string]string{".git/config": "x"}}},
		{name: ".git target", v: &evilVersion{
			manifest: strings.Replace(evilManifest("a.txt"), `"t0.txt"`, `".git/hooks/pre-commit"`, 1), files: map[string]string{"a.txt": "x"}}},
		{name: "reserved name", v: &evilVersion{manifest: evilManifest(".jig-digests.json"), files: map[string]string{".jig-digests.json": "{}"}}},
		{name: "bad signature", v: func() *evilVersion {
			v := good()
			v.sigs = `{"namespace":"@main","path":"features/x","version":"1.0.0","signatures":[{"signature":"-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n","key":"x","fingerprint":"y"}]}`
			return v
		}()},
		{name: "slowloris", timeout: "1s", v: func() *evilVersion {
			v := good()
			v.hook = func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path != evilBase+"/1.0.0/files/templates/a.txt" {
					return false
				}
				w.Header().Set("Content-Length", "100")
				w.WriteHeader(200)
				w.(http.Flusher).Flush()
				select { // never sends the body; ends when the mirror hangs up
				case <-r.Context().Done():
				case <-time.After(time.Minute):
				}
				return true
			}
			return v
		}()},
		{name: "redirect to another host", v: func() *evilVersion {
			v := good()
			v.hook = func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path != evilBase+"/1.0.0/files/templates/a.txt" {
					return false
				}
				http.Redirect(w, r, elsewhere.URL+"/a.txt", http.StatusFound)
				return true
			}
			return v
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := httptest.NewServer(tc.v)
			t.Cleanup(up.Close)
			timeout := ""
			if tc.timeout != "" {
				timeout = fmt.Sprintf(`,"timeout":%q`, tc.timeout)
			}
			cfg := upstreams(t, fmt.Sprintf(`{"upstreams":[{"url":%q,"namespaces":{"@main":"@main"}%s}]}`, up.URL, timeout), nil)
			st := memory.New()
			m, err := registryserver.New(append([]registryserver.Option{registryserver.WithStorage(st), registryserver.WithUpstreams(cfg),
				registryserver.WithRateLimit(1_000_000, time.Minute), registryserver.WithLogger(zaptest.NewLogger(t))}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = m.Close() })
			for _, p := range []string{evilBase + "/1.0.0", evilBase} {
				r := fetch(t, m, p, "")
				if r.status != 504 || wireCode(r.body) != "UPSTREAM_UNAVAILABLE" {
					t.Errorf("GET %s: got %d %s, want 504 UPSTREAM_UNAVAILABLE", p, r.status, r.body)
				}
			}
			keys, err := st.List(t.Context(), "@main/")
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 0 {
				t.Errorf("stored %v, want nothing", keys)
			}
		})
	}
	t.Run("honest", func(t *testing.T) {
		t.Parallel()
		up := httptest.NewServer(good())
		t.Cleanup(up.Close)
		m := newMirror(t, memory.New(), up.URL, `{"@main":"@main"}`, registryserver.WithLogger(zaptest.NewLogger(t)))
		if r := fetch(t, m, evilBase+"/1.0.0/files/templates/a.txt", ""); r.status != 200 || string(r.body) != "hello\n" {
			t.Errorf("got %d %q, want 200 hello", r.status, r.body)
		}
	})
	t.Cleanup(func() {
		if n := elsewhereHits.Load(); n != 0 {
			t.Errorf("the other host got %d requests, want 0", n)
		}
	})
}
