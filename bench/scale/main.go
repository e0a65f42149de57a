// Command scale plants a catalog of N registries, each with several
// versions, straight into a disk storage folder in jig-server's layout,
// for bench/scale.sh to measure what the server's costs grow with.
//
//	scale -dir /tmp/storage -n 10000 -versions 3 -namespaces 10
//
// The registries are those of internal/scalecatalog, spread over
// -namespaces namespaces (@scale0, @scale1, …). Every version has one
// template file.
// Writes are plain file writes, several folders at a time: planting is
// not what is measured.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/jigkit/jig/internal/scalecatalog"
	"github.com/jigkit/jig/registry/layout"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	dir := fs.String("dir", "", "disk storage folder to plant into (created)")
	n := fs.Int("n", 1000, "registries to plant")
	versions := fs.Int("versions", 3, "versions per registry")
	namespaces := fs.Int("namespaces", 10, "namespaces to spread the registries over")
	workers := fs.Int("j", 8, "registries written at a time")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *n < 1 || *versions < 1 || *namespaces < 1 || *workers < 1 {
		return errors.New("usage: scale -dir DIR [-n N] [-versions V] [-namespaces K] [-j W]")
	}
	jobs := make(chan int)
	errc := make(chan error, *workers)
	var wg sync.WaitGroup
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := plant(*dir, i, *versions, *namespaces); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	var err error
feed:
	for i := range *n {
		select {
		case jobs <- i:
		case err = <-errc:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errc:
		default:
		}
	}
	return err
}

// plant writes registry i: its versions list and each version's manifest
// and template file.
func plant(dir string, i, versions, namespaces int) error {
	r := scalecatalog.Of(i, namespaces)
	ns, path, name := r.Namespace, r.Path, r.Name
	var list []string
	for v := versions; v >= 1; v-- {
		list = append(list, strconv.Itoa(v)+".0.0")
	}
	for _, v := range list {
		m := map[string]any{
			"name":        name,
			"namespace":   ns,
			"type":        scalecatalog.Type,
			"version":     v,
			"description": r.Description,
			"tags":        r.Tags,
			"files": []map[string]string{
				{"target": "src/" + name + ".ts", "type": "registry:lib", "path": "templates/" + name + ".ts"},
			},
		}
		if err := writeJSON(filepath.Join(dir, filepath.FromSlash(layout.Manifest(ns, path, v))), m); err != nil {
			return err
		}
		file := filepath.Join(dir, filepath.FromSlash(layout.File(ns, path, v, "templates/"+name+".ts")))
		if err := writeFile(file, []byte("export const "+"v = \""+v+"\";\n")); err != nil {
			return err
		}
	}
	return writeJSON(filepath.Join(dir, filepath.FromSlash(layout.Versions(ns, path))), map[string]any{"versions": list})
}

func writeJSON(p string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(p, append(b, '\n'))
}

func writeFile(p string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}
