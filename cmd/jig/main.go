// Command jig scaffolds projects from versioned registries; see "jig --help".
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/jigkit/jig/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
