package registryclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func ExampleNew() {
	ctx := context.Background()
	// A registry server to talk to; in real use this is a remote URL.
	st := memory.New()
	for k, v := range map[string]string{
		"@main/quality/eslint/versions.json":          `{"versions":["1.0.0"]}`,
		"@main/quality/eslint/1.0.0/registry.json":    `{"name":"eslint","namespace":"@main","version":"1.0.0","type":"registry:quality","priority":6,"files":[{"target":"eslint.config.js","type":"registry:config","path":"eslint.config.js"}]}`,
		"@main/quality/eslint/1.0.0/eslint.config.js": "export default [];\n",
	} {
		_ = st.Put(ctx, k, strings.NewReader(v), int64(len(v)))
	}
	auth, _ := registryserver.ParseAuthConfig([]byte(`{"@main": []}`))
	h, _ := registryserver.New(registryserver.WithStorage(st), registryserver.WithAuth(auth))
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	c, err := registryclient.New(srv.URL)
	if err != nil {
		panic(err)
	}
	nss, _ := c.Namespaces(ctx)
	fmt.Println(nss)

	m, err := c.Manifest(ctx, registry.MustParseID("quality/eslint"))
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Name, m.Version)

	id := registry.MustParseID("@main/quality/eslint").WithVersion(m.Version)
	body, _ := c.File(ctx, id, m.Files[0].Path)
	fmt.Print(string(body))

	_, err = c.Manifest(ctx, registry.MustParseID("quality/missing"))
	fmt.Println(errors.Is(err, registryclient.ErrNotFound))
	// Output:
	// [@main]
	// eslint 1.0.0
	// export default [];
	// true
}
