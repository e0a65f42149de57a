// Command jig-server serves namespaced registries over HTTP; see
// "jig-server --help".
package main

import (
	"context"
	"os"

	"github.com/jigkit/jig/internal/servercli"
	"github.com/jigkit/jig/internal/shutdown"
)

func main() {
	servercli.TuneGC(os.Getenv)
	os.Exit(shutdown.Run("jig-server", shutdown.Grace, os.Stderr, func(ctx context.Context) int {
		return servercli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	}))
}
