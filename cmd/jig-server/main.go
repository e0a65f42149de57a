// Command jig-server serves namespaced registries over HTTP; see
// "jig-server --help".
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/jigkit/jig/internal/servercli"
)

func main() {
	servercli.TuneGC(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := servercli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
