package registryserver

import (
	"fmt"
	"strings"

	"github.com/jigkit/jig/registryserver/internal/webui"
)

// WithWebCatalog serves the web catalog (server-rendered pages to browse
// namespaces, search registries and read them) under basePath:
// "/" or a path such as "/catalog/". Its pages are basePath itself and
// everything under basePath + "-/", so they never shadow an API route.
// "" turns the catalog off. The catalog shows only what the visitor's
// token (from the sign-in cookie) may read, through the same access check
// as the read routes. The default is no catalog.
func WithWebCatalog(basePath string) Option {
	return func(o *options) error {
		if basePath != "" && !webui.ValidBasePath(basePath) {
			return fmt.Errorf("WithWebCatalog: base path %q must be / or look like /catalog/", basePath)
		}
		if basePath != "" {
			for _, api := range []string{"/registries/", "/namespaces/", "/presets/", "/schemas/", "/search/", "/health/", "/metrics/"} {
				if strings.HasPrefix(basePath, api) {
					return fmt.Errorf("WithWebCatalog: base path %q is inside the API route %s", basePath, strings.TrimSuffix(api, "/"))
				}
			}
		}
		o.webBase = basePath
		return nil
	}
}
