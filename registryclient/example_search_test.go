package registryclient_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/search"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func ExampleClient_Search() {
	ctx := context.Background()
	st := memory.New()
	for k, v := range map[string]string{
		"@main/quality/eslint/versions.json":       `{"versions":["1.1.0","1.0.0"]}`,
		"@main/quality/eslint/1.1.0/registry.json": `{"name":"eslint","namespace":"@main","version":"1.1.0","type":"registry:quality","priority":6,"description":"ESLint flat config"}`,
		"@main/quality/prettier/versions.json":     `{"versions":["3.0.0"]}`,
		"@main/quality/prettier/3.0.0/registry.json": `{"name":"prettier","namespace":"@main","version":"3.0.0","type":"registry:quality","priority":6,
			"description":"Code formatter that plays well with ESLint"}`,
	} {
		_ = st.Put(ctx, k, strings.NewReader(v), int64(len(v)))
	}
	h, _ := registryserver.New(registryserver.WithStorage(st))
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	c, _ := registryclient.New(srv.URL)
	res, err := c.Search(ctx, search.Query{Text: "eslint"})
	if err != nil {
		panic(err)
	}
	for _, hit := range res.Results {
		fmt.Println(hit.Match, hit.ID(), hit.Version)
	}

	info, err := c.Info(ctx, registry.MustParseID("@main/quality/eslint"))
	if err != nil {
		panic(err)
	}
	fmt.Println(info.Versions, info.Ref())
	// Output:
	// exact @main/quality/eslint 1.1.0
	// word @main/quality/prettier 3.0.0
	// [1.1.0 1.0.0] @main/quality/eslint
}
