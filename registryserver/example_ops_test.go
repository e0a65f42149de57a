package registryserver_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jigkit/jig/registryserver"
)

func ExampleParseTrustProxy() {
	for _, v := range []string{"false", "true", "2", "maybe"} {
		hops, err := registryserver.ParseTrustProxy(v)
		fmt.Println(v, hops, err != nil)
	}
	// Output:
	// false 0 false
	// true -1 false
	// 2 2 false
	// maybe 0 true
}

// A handler behind one reverse proxy, limited to 2 requests a minute per
// client, with its metrics on the embedding program's registry.
func ExampleWithRateLimit() {
	reg := prometheus.NewRegistry()
	h, err := registryserver.New(
		registryserver.WithRateLimit(2, time.Minute),
		registryserver.WithTrustProxy(1),
		registryserver.WithMetrics(reg),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()
	for range 3 {
		req := httptest.NewRequest(http.MethodGet, "/health", nil)
		req.Header.Set("X-Forwarded-For", "203.0.113.7")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Printf("%d remaining=%s retry-after=%q\n", rec.Code, rec.Header().Get("RateLimit-Remaining"), rec.Header().Get("Retry-After"))
	}
	// Output:
	// 200 remaining=1 retry-after=""
	// 200 remaining=0 retry-after=""
	// 429 remaining=0 retry-after="60"
}
