package registryserver_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry/search"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func searchIDs(t *testing.T, body []byte) []string {
	t.Helper()
	var p search.Page
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	out := []string{}
	for _, h := range p.Results {
		out = append(out, h.ID()+"@"+h.Version+" "+string(h.Match))
	}
	return out
}

func TestSearch(t *testing.T) {
	t.Parallel()
	h := newHandler(t)
	tests := []struct {
		name, target string
		hdr          map[string]string
		status       int
		want         []string // result ids, for 200
		code         string   // error code, for 400
		cache, vary  string
	}{
		{name: "anonymous sees public only", target: "/search?q=thing", status: 200, want: []string{},
			cache: "public, max-age=60", vary: "Authorization, X-Registry-Token"},
		{name: "exact before prefix", target: "/search?q=node", status: 200,
			want: []string{"@main/runtimes/node@1.1.0 exact"}, cache: "public, max-age=60"},
		{name: "empty query lists everything visible", target: "/search", status: 200,
			want: []string{"@main/quality/eslint@2.0.0 all", "@main/runtimes/node@1.1.0 all"}},
		{name: "read token adds its namespace", target: "/search?q=thing", hdr: bearer("read-tok"), status: 200,
			want: []string{"@gated/secret/thing@1.0.0 exact"}, cache: "private, max-age=60", vary: "Authorization, X-Registry-Token"},
		{name: "expired token does not", target: "/search?q=thing", hdr: bearer("old-tok"), status: 200, want: []string{},
			cache: "private, max-age=60"},
		{name: "admin sees undeclared", target: "/search?q=x", hdr: bearer(adminToken), status: 200,
			want: []string{"@undeclared/x@1.0.0 exact"}},
		{name: "namespace filter on a gated namespace", target: "/search?namespace=@gated", status: 200, want: []string{}},
		{name: "type filter", target: "/search?type=runtime&hdr", status: 200,
			want: []string{"@main/quality/eslint@2.0.0 all", "@main/runtimes/node@1.1.0 all"}}, // the fixture's manifests are all runtimes
		{name: "limit", target: "/search?limit=1", status: 200, want: []string{"@main/quality/eslint@2.0.0 all"}},
		{name: "query too long", target: "/search?q=" + strings.Repeat("a", search.MaxTextLen+1), status: 400, code: "QUERY_TOO_LONG", cache: "no-store"},
		{name: "bad limit", target: "/search?limit=1000", status: 400, code: "INVALID_QUERY"},
		{name: "bad cursor", target: "/search?cursor=%21", status: 400, code: "INVALID_QUERY"},
		{name: "bad namespace", target: "/search?namespace=main", status: 400, code: "INVALID_QUERY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp := do(h, http.MethodGet, tt.target, tt.hdr)
			body := readBody(t, resp)
			if resp.StatusCode != tt.status {
				t.Fatalf("status: got %d, want %d (%s)", resp.StatusCode, tt.status, body)
			}
			if tt.status == 200 {
				if diff := cmp.Diff(tt.want, searchIDs(t, body)); diff != "" {
					t.Errorf("results (-want +got):\n%s", diff)
				}
			} else {
				var e struct{ Code string }
				_ = json.Unmarshal(body, &e)
				if e.Code != tt.code {
					t.Errorf("code: got %q, want %q (%s)", e.Code, tt.code, body)
				}
			}
			if tt.cache != "" {
				if got := resp.Header.Get("Cache-Control"); got != tt.cache {
					t.Errorf("Cache-Control: got %q, want %q", got, tt.cache)
				}
			}
			if tt.vary != "" && !strings.Contains(strings.Join(resp.Header.Values("Vary"), ", "), tt.vary) {
				t.Errorf("Vary: got %q, want it to contain %q", resp.Header.Values("Vary"), tt.vary)
			}
		})
	}
}

func TestSearchPaging(t *testing.T) {
	t.Parallel()
	h := newHandler(t)
	var got []string
	target := "/search?limit=1"
	for i := 0; ; i++ {
		if i > 10 {
			t.Fatal("the cursor does not end")
		}
		resp := do(h, http.MethodGet, target, bearer(adminToken))
		body := readBody(t, resp)
		got = append(got, searchIDs(t, body)...)
		var p search.Page
		_ = json.Unmarshal(body, &p)
		if p.Next == "" {
			break
		}
		target = "/search?limit=1&cursor=" + url.QueryEscape(p.Next)
	}
	want := []string{
		"@gated/secret/thing@1.0.0 all", "@main/quality/eslint@2.0.0 all", "@main/runtimes/node@1.1.0 all", "@undeclared/x@1.0.0 all",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
}

func TestPresetsList(t *testing.T) {
	t.Parallel()
	h := newHandler(t)
	resp := do(h, http.MethodGet, "/presets", nil)
	body := readBody(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	want := `{"presets":[{"name":"node","version":"1.0.0","registries":["@main/runtimes/node"]}]}`
	if string(body) != want {
		t.Errorf("body: got %s, want %s", body, want)
	}
	if got := resp.Header.Get("Cache-Control"); got != "public, max-age=60" {
		t.Errorf("Cache-Control: got %q", got)
	}
	// GET /presets/:name is unchanged.
	if resp := do(h, http.MethodGet, "/presets/node", nil); resp.StatusCode != 200 {
		t.Errorf("/presets/node: got %d", resp.StatusCode)
	}
}

// TestSearchSeesPublishes: a publish through the handler shows at once; one
// through another replica on the same storage shows after its rebuild.
func TestSearchSeesPublishes(t *testing.T) {
	t.Parallel()
	st := memory.New()
	a := publishHandler(t, st)
	b := publishHandler(t, st, registryserver.WithSearchRefresh(20*time.Millisecond))
	for _, h := range []http.Handler{a, b} { // build both indexes
		if status, body := get(t, h, "/search?q=ui-kit", pubAdmin); status != 200 || string(body) != `{"results":[]}` {
			t.Fatalf("before: got %d %s", status, body)
		}
	}
	if r := post(t, a, pubPublish, form{archive: pkg(regJSON("@gated", "1.0.0", `,"description":"Buttons and forms"`))}); r.status != 201 {
		t.Fatalf("publish: %d %s", r.status, r.body)
	}
	want := []string{"@gated/features/ui-kit@1.0.0 word"}
	_, body := get(t, a, "/search?q=forms", pubRead)
	if diff := cmp.Diff(want, searchIDs(t, body)); diff != "" {
		t.Errorf("same replica (-want +got):\n%s", diff)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, body := get(t, b, "/search?q=forms", pubRead)
		if slices.Equal(searchIDs(t, body), want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("other replica never saw the publish: %s", body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// An older version published later does not replace the latest.
	if r := post(t, a, pubPublish, form{archive: pkg(regJSON("@gated", "0.9.0", ""))}); r.status != 201 {
		t.Fatalf("publish: %d %s", r.status, r.body)
	}
	_, body = get(t, a, "/search?q=forms", pubRead)
	if diff := cmp.Diff(want, searchIDs(t, body)); diff != "" {
		t.Errorf("after an older version (-want +got):\n%s", diff)
	}
}

// TestAnonymousSearchNeverSeesGated is the property: over random auth.json
// files, stored catalogs and queries, an anonymous search never returns a
// registry of a namespace that is not public, and its response (status,
// headers, body) is the same as that of a server where the non-public
// namespaces do not exist at all, neither in storage nor in auth.json. The
// same holds for the web catalog's pages: home, search, and the page of
// every stored registry.
func TestAnonymousSearchNeverSeesGated(t *testing.T) {
	t.Parallel()
	words := []string{"eslint", "lint", "node", "secret", "react", "vitest", "build", "a", "e", "s", "config", "quality", "runtime", "@gated", "@gated/", "x-1"}
	for seed := uint64(0); seed < 40; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 42))
			auth := map[string]any{}
			public := map[string]bool{}
			var nss []string
			for i := range 2 + rng.IntN(5) {
				ns := fmt.Sprintf("@ns%d", i)
				nss = append(nss, ns)
				switch rng.IntN(3) {
				case 0:
					auth[ns] = []any{}
					public[ns] = true
				case 1:
					auth[ns] = []any{map[string]any{"token": fmt.Sprintf("tok-%d-%d", seed, i), "publish": rng.IntN(2) == 0}}
				case 2: // undeclared: absent from auth.json
				}
			}
			full, pub := memory.New(), memory.New()
			var regPages []string
			for _, ns := range nss {
				for j := range 1 + rng.IntN(4) {
					name := words[rng.IntN(6)] + fmt.Sprint(j)
					path := []string{"quality", "runtimes", "build"}[rng.IntN(3)] + "/" + name
					desc := words[rng.IntN(len(words))] + " " + words[rng.IntN(len(words))]
					m := fmt.Sprintf(`{"name":%q,"namespace":%q,"version":"1.0.0","type":"registry:quality","priority":1,"description":%q,"tags":[%q]}`,
						name, ns, desc, words[rng.IntN(len(words))])
					for _, st := range []storage.Storage{full, pub} {
						if st == pub && !public[ns] {
							continue
						}
						if st == full {
							regPages = append(regPages, "/-/r/"+ns+"/"+path, "/-/r/"+ns+"/"+path+"/1.0.0")
						}
						put(t, st, ns+"/"+path+"/versions.json", `{"versions":["1.0.0"]}`)
						put(t, st, ns+"/"+path+"/1.0.0/registry.json", m)
					}
				}
			}
			authFull, _ := json.Marshal(auth)
			authPub := map[string]any{}
			for ns := range public {
				authPub[ns] = []any{}
			}
			authPubJSON, _ := json.Marshal(authPub)
			hFull := authHandler(t, full, authFull)
			hPub := authHandler(t, pub, authPubJSON)
			for range 20 {
				v := url.Values{}
				if rng.IntN(4) > 0 {
					v.Set("q", words[rng.IntN(len(words))])
				}
				if rng.IntN(4) == 0 {
					v.Set("namespace", nss[rng.IntN(len(nss))])
				}
				if rng.IntN(5) == 0 {
					v.Set("limit", fmt.Sprint(1+rng.IntN(3)))
				}
				target := "/search?" + v.Encode()
				for _, p := range []string{"/", "/-/search?" + v.Encode(), regPages[rng.IntN(len(regPages))]} {
					p1, p2 := do(hFull, http.MethodGet, p, nil), do(hPub, http.MethodGet, p, nil)
					b1, b2 := readBody(t, p1), readBody(t, p2)
					if p1.StatusCode != p2.StatusCode || string(b1) != string(b2) {
						t.Fatalf("page %s differs with and without the gated namespaces:\n%d %s\n%d %s", p, p1.StatusCode, b1, p2.StatusCode, b2)
					}
					if diff := cmp.Diff(comparableHeaders(p2.Header), comparableHeaders(p1.Header)); diff != "" {
						t.Fatalf("page %s: headers differ (-without +with):\n%s", p, diff)
					}
				}
				r1, r2 := do(hFull, http.MethodGet, target, nil), do(hPub, http.MethodGet, target, nil)
				b1, b2 := readBody(t, r1), readBody(t, r2)
				if r1.StatusCode != 200 {
					t.Fatalf("%s: status %d %s", target, r1.StatusCode, b1)
				}
				var p search.Page
				if err := json.Unmarshal(b1, &p); err != nil {
					t.Fatal(err)
				}
				for _, h := range p.Results {
					if !public[h.Namespace] {
						t.Fatalf("%s with auth %s: anonymous search returned %s", target, authFull, h.ID())
					}
				}
				if r1.StatusCode != r2.StatusCode || string(b1) != string(b2) {
					t.Fatalf("%s: responses differ with and without the gated namespaces:\n%d %s\n%d %s", target, r1.StatusCode, b1, r2.StatusCode, b2)
				}
				if diff := cmp.Diff(comparableHeaders(r2.Header), comparableHeaders(r1.Header)); diff != "" {
					t.Fatalf("%s: headers differ (-without +with):\n%s", target, diff)
				}
			}
		})
	}
}

// comparableHeaders drops the headers that differ between any two
// responses (request id, date, rate-limit counters).
func comparableHeaders(h http.Header) http.Header {
	out := h.Clone()
	for _, k := range []string{"X-Request-Id", "Date", "Ratelimit-Limit", "Ratelimit-Remaining", "Ratelimit-Reset"} {
		out.Del(k)
	}
	return out
}

func put(t *testing.T, st storage.Storage, key, val string) {
	t.Helper()
	if err := st.Put(t.Context(), key, strings.NewReader(val), int64(len(val))); err != nil {
		t.Fatal(err)
	}
}

func authHandler(t *testing.T, st storage.Storage, authJSON []byte) *registryserver.Handler {
	t.Helper()
	a, err := registryserver.ParseAuthConfig(authJSON)
	if err != nil {
		t.Fatal(err)
	}
	h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithAuth(a),
		registryserver.WithRateLimit(1_000_000, time.Minute), registryserver.WithWebCatalog("/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}
