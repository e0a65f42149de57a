// Command list-registries shows how build tooling can drive the jig client
// SDK: it lists the namespaces a registry server offers, the registries in
// one namespace, and downloads every file of one registry version into a
// directory.
//
//	go run ./list-registries -url http://localhost:8080
//	go run ./list-registries -url http://localhost:8080 -namespace @main
//	go run ./list-registries -url http://localhost:8080 -get @main/quality/eslint -out ./vendor-eslint
//
// A token for gated namespaces is read from $REGISTRY_TOKEN.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "list-registries:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("list-registries", flag.ContinueOnError)
	url := fs.String("url", "http://localhost:8080", "registry server URL")
	ns := fs.String("namespace", "", "list the registries in this namespace")
	get := fs.String("get", "", "download the files of this registry (e.g. @main/quality/eslint[@1.0.0])")
	dir := fs.String("out", "registry-files", "directory for -get")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := registryclient.New(*url, registryclient.WithToken(os.Getenv("REGISTRY_TOKEN")), registryclient.WithUserAgent("list-registries-example"))
	if err != nil {
		return err
	}
	switch {
	case *get != "":
		return download(ctx, c, *get, *dir, out)
	case *ns != "":
		regs, err := c.Registries(ctx, *ns)
		if err != nil {
			return err
		}
		for _, r := range regs {
			fmt.Fprintf(out, "%s/%s\n", *ns, r)
		}
		return nil
	default:
		nss, err := c.Namespaces(ctx)
		if err != nil {
			return err
		}
		for _, n := range nss {
			fmt.Fprintln(out, n)
		}
		return nil
	}
}

// download writes every package file of a registry version under dir,
// keeping the package's relative paths.
func download(ctx context.Context, c *registryclient.Client, ident, dir string, out io.Writer) error {
	id, err := registry.ParseID(ident)
	if err != nil {
		return err
	}
	m, err := c.Manifest(ctx, id) // latest when no @version was given
	if err != nil {
		return err
	}
	id.Version = m.Version
	fmt.Fprintf(out, "%s@%s\n", id.Key(), m.Version)
	for _, p := range m.FilePaths() {
		data, err := c.File(ctx, id, p) // p passed registry.ValidFilePath on the way
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "  %s (%d bytes)\n", p, len(data))
	}
	return nil
}
