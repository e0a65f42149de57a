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
