// Command jig scaffolds projects from versioned registries; see "jig --help".
package main

import (
	"context"
	"os"
	"runtime/debug"

	"github.com/jigkit/jig/internal/cli"
	"github.com/jigkit/jig/internal/shutdown"
)

func main() {
	// A run is short and its heap small: a collection at the default 4 MB
	// goal costs more than it frees. GOGC, when set, still decides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(shutdown.Run("jig", shutdown.Grace, os.Stderr, func(ctx context.Context) int {
		return cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	}))
}
