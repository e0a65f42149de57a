package registryclient_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/jigkit/jig/registryclient"
)

// TestTraceNeverHoldsTheToken: each request is traced once, with its
// status, and nothing of the token or the URL's user info.
func TestTraceNeverHoldsTheToken(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"namespaces":["@main"]}`)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	u.User = url.UserPassword("user", "url-secret")
	var mu sync.Mutex
	var traces []registryclient.Trace
	c, err := registryclient.New(u.String(), registryclient.WithToken("tok-secret"),
		registryclient.WithTrace(func(tr registryclient.Trace) {
			mu.Lock()
			defer mu.Unlock()
			traces = append(traces, tr)
		}))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := c.Namespaces(t.Context()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(traces) != 4 {
		t.Fatalf("got %d traces, want 4", len(traces))
	}
	for _, tr := range traces {
		s := fmt.Sprintf("%+v", tr)
		if strings.Contains(s, "secret") {
			t.Errorf("trace %s holds a secret", s)
		}
		if tr.Method != http.MethodGet || tr.Status != http.StatusOK || tr.Conn != "plain" || tr.Proto != "HTTP/1.1" ||
			tr.URL != srv.URL+"/namespaces" || tr.Cache != "" {
			t.Errorf("got %+v, want GET %s/namespaces 200 HTTP/1.1 plain", tr, srv.URL)
		}
	}
}

func TestParseCacheRef(t *testing.T) {
	t.Parallel()
	base := url.QueryEscape("http://127.0.0.1:8080/reg")
	for _, tt := range []struct {
		ref  string
		want registryclient.CacheRef
		ok   bool
	}{
		{base + "/@main/runtimes/base/1.0.0", registryclient.CacheRef{Server: "http://127.0.0.1:8080/reg", Registry: "@main/runtimes/base@1.0.0", Content: "digest index"}, true},
		{base + "/signatures/@team/x/2.1.0", registryclient.CacheRef{Server: "http://127.0.0.1:8080/reg", Registry: "@team/x@2.1.0", Content: "signatures"}, true},
		{base + "/presets/small/1.0.0", registryclient.CacheRef{Server: "http://127.0.0.1:8080/reg", Registry: "@presets/small@1.0.0", Content: "preset"}, true},
		{"nothing", registryclient.CacheRef{}, false},
		{base + "/main/x/1.0.0", registryclient.CacheRef{Server: "http://127.0.0.1:8080/reg"}, false},
	} {
		got, ok := registryclient.ParseCacheRef(tt.ref)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("ParseCacheRef(%q) = %+v, %v; want %+v, %v", tt.ref, got, ok, tt.want, tt.ok)
		}
	}
}
