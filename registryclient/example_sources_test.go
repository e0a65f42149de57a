package registryclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
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

// teamResolver is a [registryclient.Resolver] that sends every namespace
// of a team to one server with the team's token, as a build tool with its
// own settings might.
type teamResolver struct{ url, token string }

func (r teamResolver) List() []string { return []string{"@main", "@team"} }

func (r teamResolver) Get(ns string) (registryclient.Entry, bool) {
	if !slices.Contains(r.List(), ns) {
		return registryclient.Entry{}, false
	}
	return registryclient.Entry{URL: r.url, Token: r.token}, true
}

func (r teamResolver) Resolve(ns string) (registryclient.Entry, error) {
	e, ok := r.Get(ns)
	if !ok {
		return registryclient.Entry{}, &registryclient.NotConfiguredError{Namespace: ns}
	}
	return e, nil
}

// Sources can take their entries from any Resolver: here one of the
// program's own, rather than an rc file.
func ExampleNewSourcesFrom() {
	ctx := context.Background()
	st := memory.New()
	for k, v := range map[string]string{
		"@team/tools/lint/versions.json":       `{"versions":["2.0.0"]}`,
		"@team/tools/lint/2.0.0/registry.json": `{"name":"lint","namespace":"@team","version":"2.0.0","type":"registry:quality","priority":6,"files":[]}`,
	} {
		_ = st.Put(ctx, k, strings.NewReader(v), int64(len(v)))
	}
	h, _ := registryserver.New(registryserver.WithStorage(st))
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	src := registryclient.NewSourcesFrom(teamResolver{url: srv.URL, token: "s3cret"})
	m, err := src.Manifest(ctx, registry.MustParseID("@team/tools/lint"))
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Name, m.Version)
	_, err = src.Manifest(ctx, registry.MustParseID("@other/x"))
	fmt.Println(errors.Is(err, registryclient.ErrNotConfigured))
	// Output:
	// lint 2.0.0
	// true
}
