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

// Build tooling configures its sources in code: no ~/.jigrc is read or
// written.
func ExampleNewSources() {
	ctx := context.Background()
	// A registry server to talk to; in real use this is a remote URL.
	st := memory.New()
	for k, v := range map[string]string{
		"@main/quality/eslint/versions.json":       `{"versions":["1.0.0"]}`,
		"@main/quality/eslint/1.0.0/registry.json": `{"name":"eslint","namespace":"@main","version":"1.0.0","type":"registry:quality","priority":6,"files":[]}`,
	} {
		_ = st.Put(ctx, k, strings.NewReader(v), int64(len(v)))
	}
	h, _ := registryserver.New(registryserver.WithStorage(st))
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	main := registryclient.Entry{URL: srv.URL, Token: "s3cret"}
	src, err := registryclient.NewSources(map[string]registryclient.Entry{
		"@main":    main,
		"@presets": main,
	}, registryclient.WithUserAgent("build-tool"))
	if err != nil {
		panic(err)
	}
	m, err := src.Manifest(ctx, registry.MustParseID("@main/quality/eslint"))
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Name, m.Version)

	// Only the namespaces given are configured.
	_, err = src.Manifest(ctx, registry.MustParseID("@company/ui"))
	fmt.Println(err, errors.Is(err, registryclient.ErrNotConfigured))

	// Entries are checked when the sources are built.
	_, err = registryclient.NewSources(map[string]registryclient.Entry{"@main": {URL: "registry.example.com"}})
	fmt.Println(errors.Is(err, registryclient.ErrInvalidConfig))
	// Output:
	// eslint 1.0.0
	// No registry configured for namespace @company true
	// true
}
