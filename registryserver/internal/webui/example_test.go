package webui_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"strings"

	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// The catalog is mounted into the registry handler with
// registryserver.WithWebCatalog; the API routes stay as they are.
func Example() {
	h, err := registryserver.New(registryserver.WithStorage(memory.New()), registryserver.WithWebCatalog("/catalog/"))
	if err != nil {
		panic(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp, err := srv.Client().Get(srv.URL + "/catalog/")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"))
	fmt.Println(strings.Contains(string(body), "<h1>Find a registry</h1>"))
	fmt.Println(strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'"))

	resp, _ = srv.Client().Get(srv.URL + "/namespaces")
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"))
	resp.Body.Close()
	// Output:
	// 200 text/html; charset=utf-8
	// true
	// true
	// 200 application/json
}
