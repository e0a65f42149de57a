package registryserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/catalog"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// A mirror serving the upstream's @main as @public: the first read
// fetches the version, verifies it and stores it in the mirror's storage.
func ExampleWithUpstreams() {
	ctx := context.Background()
	upStore := memory.New()
	if _, err := catalog.Seed(ctx, upStore); err != nil {
		panic(err)
	}
	upstream, _ := registryserver.New(registryserver.WithStorage(upStore))
	defer upstream.Close()
	upSrv := httptest.NewServer(upstream)
	defer upSrv.Close()

	cfg, err := registryserver.ParseUpstreams([]byte(`{"upstreams": [{"url": "`+upSrv.URL+`", "namespaces": {"@public": "@main"}}]}`), nil)
	if err != nil {
		panic(err)
	}
	store := memory.New()
	mirror, err := registryserver.New(registryserver.WithStorage(store), registryserver.WithUpstreams(cfg))
	if err != nil {
		panic(err)
	}
	defer mirror.Close()
	if err := mirror.CheckUpstreams(ctx); err != nil {
		panic(err)
	}
	srv := httptest.NewServer(mirror)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/registries/@public/quality/editorconfig/1.0.0/files/templates/editorconfig")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	_, err = store.Stat(ctx, "@public/quality/editorconfig/1.0.0/registry.json")
	fmt.Println(resp.StatusCode, len(body) > 0, err == nil)
	// Output: 200 true true
}
