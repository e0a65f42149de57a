// Command scaffold shows how build tooling can apply jig registries to a
// directory through the Go API alone, without the jig CLI: it builds the
// sources from a server URL, plans, prints the plan and applies it.
//
//	go run ./scaffold -url http://localhost:8080 -dir ./demo -template @presets/node -init
//	go run ./scaffold -url http://localhost:8080 -dir ./demo -template quality/eslint
//	go run ./scaffold -url http://localhost:8080 -dir ./demo -template quality/eslint -dry-run
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

	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/apply"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "scaffold:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("scaffold", flag.ContinueOnError)
	url := fs.String("url", "http://localhost:8080", "registry server URL (for @main and @presets)")
	dir := fs.String("dir", ".", "project directory")
	template := fs.String("template", "", "preset or registry identifier, e.g. @presets/node or quality/eslint:js")
	initMode := fs.Bool("init", false, "create the project (init) instead of adding to it; presets need it")
	dryRun := fs.Bool("dry-run", false, "print the plan and write nothing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *template == "" {
		return fmt.Errorf("-template is required")
	}

	// The same routing the CLI uses, built from Go values instead of ~/.jigrc.
	entry := registryclient.Entry{URL: *url, Token: os.Getenv("REGISTRY_TOKEN")}
	src, err := registryclient.NewSources(map[string]registryclient.Entry{"@main": entry, "@presets": entry},
		registryclient.WithUserAgent("scaffold-example"))
	if err != nil {
		return err
	}
	eng, err := apply.New(src)
	if err != nil {
		return err
	}
	mode := apply.ModeAdd
	if *initMode {
		mode = apply.ModeInit
	}
	plan, err := eng.Run(ctx, apply.Request{Dir: *dir, Template: *template, Mode: mode}, *dryRun)
	if err != nil {
		return err
	}
	if plan.AlreadyInstalled != "" {
		fmt.Fprintf(out, "%s is already installed\n", plan.AlreadyInstalled)
		return nil
	}
	for _, r := range plan.Registries {
		fmt.Fprintf(out, "registry %s (%s)\n", r.ID, r.Language)
	}
	for _, f := range plan.Files {
		fmt.Fprintf(out, "%-9s %s\n", f.Action, f.Target)
	}
	for _, p := range plan.Packages {
		fmt.Fprintf(out, "package %s %s %s\n", p.Action, p.Name, p.Range)
	}
	for _, w := range plan.Warnings {
		fmt.Fprintf(out, "warning: %s\n", w)
	}
	return nil
}
