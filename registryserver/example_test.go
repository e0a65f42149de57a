package registryserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"

	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func ExampleNew() {
	ctx := context.Background()
	st := memory.New()
	for key, body := range map[string]string{
		"@main/quality/eslint/versions.json":       `{"versions":["1.0.0"]}`,
		"@main/quality/eslint/1.0.0/registry.json": `{"name":"eslint","namespace":"@main","version":"1.0.0","type":"registry:quality"}`,
		"@team/tools/lint/versions.json":           `{"versions":["2.0.0"]}`,
	} {
		if err := st.Put(ctx, key, strings.NewReader(body), int64(len(body))); err != nil {
			panic(err)
		}
	}
	auth, err := registryserver.ParseAuthConfig([]byte(`{"@main": [], "@team": [{"token": "s3cret"}]}`))
	if err != nil {
		panic(err)
	}
	h, err := registryserver.New(
		registryserver.WithStorage(st),
		registryserver.WithAuth(auth),
		registryserver.WithAdminToken("admin"),
	)
	if err != nil {
		panic(err)
	}
	defer h.Close()

	get := func(path, token string) {
		req := httptest.NewRequest("GET", path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		body, _ := io.ReadAll(rec.Body)
		fmt.Println(rec.Code, rec.Header().Get("Cache-Control"), strings.TrimSpace(string(body)))
	}
	get("/namespaces", "")
	get("/namespaces", "s3cret")
	get("/registries/@main/quality/eslint/versions", "")
	get("/registries/@team/tools/lint/versions", "")
	get("/registries/@team/tools/lint/versions", "s3cret")
	// Output:
	// 200 public, max-age=60 {"namespaces":["@main"]}
	// 200 private, max-age=60 {"namespaces":["@main","@team"]}
	// 200 public, max-age=60 {"versions":["1.0.0"]}
	// 401 no-store {"code":"UNAUTHORIZED","message":"Authentication token is required"}
	// 200 private, max-age=60 {"versions":["2.0.0"]}
}
