// Command record runs the interop suite (testdata/interop/cases.json) with
// the reference CLI and server and writes what they did as golden files:
// golden/<case>.json, the project trees rk leaves, and server.json, the
// reference server's answers on a storage jig wrote. scripts/interop/record.sh
// builds the reference outside this repository and runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/jigkit/jig/internal/interop"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	suite := flag.String("suite", "testdata/interop", "the suite directory")
	node := flag.String("node", "node", "the node binary (22 or later)")
	rk := flag.String("rk", "", "the reference CLI's bin.js (apps/cli/dist/bin.js)")
	refServer := flag.String("ref-server", "", "the reference server's server.js (apps/registry-server/dist/server.js)")
	jigServer := flag.String("jig-server", "", "a jig-server binary")
	jig := flag.String("jig", "", "a jig binary (publishes the storage the reference server is asked about)")
	only := flag.String("run", "", "record only the cases whose name contains this")
	flag.Parse()
	if *rk == "" || *refServer == "" || *jigServer == "" || *jig == "" {
		return fmt.Errorf("-rk, -ref-server, -jig-server and -jig are required")
	}
	s, err := interop.Load(*suite)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "jig-interop-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	tool := interop.Tool{Name: "rk", Command: []string{*node, *rk}, Jig: *jig}
	for i, c := range s.Cases {
		if *only != "" && !strings.Contains(c.Name, *only) {
			continue
		}
		dir := filepath.Join(tmp, fmt.Sprintf("case%d", i))
		store, work, home := filepath.Join(dir, "store"), filepath.Join(dir, "work"), filepath.Join(dir, "home")
		for _, d := range []string{work, home} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		if err := interop.CopyStore(*suite, c.Store, store); err != nil {
			return err
		}
		srv, err := interop.StartServer(ctx, []string{*jigServer}, dir, []string{"STORAGE_ROOT=" + store, "LOG_LEVEL=error", "NODE_ENV=production", "HOME=" + home})
		if err != nil {
			return err
		}
		tree, err := c.Run(ctx, tool, srv.URL, work, home)
		srv.Stop()
		if err != nil {
			return err
		}
		if err := interop.WriteJSON(filepath.Join(*suite, "golden", c.Name+".json"), interop.Golden{Case: c.Name, Tree: *tree}); err != nil {
			return err
		}
		fmt.Printf("recorded %s (%d files)\n", c.Name, len(tree.Files))
	}
	if *only != "" {
		return nil
	}
	work := filepath.Join(tmp, "server")
	store := filepath.Join(work, "store")
	auth, err := interop.WriteStorage(ctx, *suite, *jigServer, *jig, store, work)
	if err != nil {
		return err
	}
	srv, err := interop.StartServer(ctx, []string{*node, *refServer}, work, []string{"STORAGE_ROOT=" + store,
		"AUTH_CONFIG_PATH=" + auth, "ADMIN_TOKEN=" + interop.AdminToken, "LOG_LEVEL=error", "NODE_ENV=production", "HOME=" + work})
	if err != nil {
		return err
	}
	defer srv.Stop()
	answers, err := interop.Ask(ctx, srv.URL, s.Requests, s.Bodies, *suite)
	if err != nil {
		return err
	}
	if err := interop.WriteJSON(filepath.Join(*suite, "server.json"), answers); err != nil {
		return err
	}
	fmt.Printf("recorded %d server answers\n", len(answers))
	if ra := s.RefAuth; ra != nil {
		dir := filepath.Join(tmp, "refauth")
		store := filepath.Join(dir, "store")
		if err := interop.CopyStore(*suite, ra.Store, store); err != nil {
			return err
		}
		auth := filepath.Join(dir, "auth.json")
		if err := os.WriteFile(auth, []byte(ra.Auth), 0o644); err != nil {
			return err
		}
		ref, err := interop.StartServer(ctx, []string{*node, *refServer}, dir, []string{"STORAGE_ROOT=" + store,
			"AUTH_CONFIG_PATH=" + auth, "LOG_LEVEL=error", "NODE_ENV=production", "HOME=" + dir})
		if err != nil {
			return err
		}
		defer ref.Stop()
		answers, err := interop.Ask(ctx, ref.URL, ra.Requests, nil, *suite)
		if err != nil {
			return err
		}
		if err := interop.WriteJSON(filepath.Join(*suite, "refauth.json"), answers); err != nil {
			return err
		}
		fmt.Printf("recorded %d answers of the reference server with its own auth.json\n", len(answers))
	}
	return nil
}
