// Command baseline is the static reference point of bench/compare.sh: a
// plain net/http server with no middleware that answers the same paths as
// a running jig-server with the same bytes.
//
// At start it reads every path listed in -paths from -copy-from three
// times (Accept-Encoding br, gzip and none) and keeps the bodies and their
// Content-Type, Content-Encoding, ETag, Cache-Control and Vary headers in
// memory. It then serves them on -listen, choosing br, then gzip, then
// identity by a plain substring test of Accept-Encoding. Whatever
// jig-server spends beyond this server is the cost of its middleware,
// routing, storage reads and negotiation.
//
//	baseline -copy-from http://127.0.0.1:8080 -paths paths.txt -listen 127.0.0.1:9090
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		stop()
		os.Exit(1)
	}
}

// variant is one stored representation of a path.
type variant struct {
	body []byte
	hdr  http.Header
}

// entry holds a path's representations, by content coding.
type entry struct {
	br, gzip, identity *variant
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("baseline", flag.ContinueOnError)
	from := fs.String("copy-from", "", "base URL of the jig-server whose responses are copied")
	pathsFile := fs.String("paths", "", "file of paths to copy, one a line")
	listen := fs.String("listen", "127.0.0.1:0", "address to serve on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *from == "" || *pathsFile == "" {
		return errors.New("-copy-from and -paths are required")
	}
	data, err := os.ReadFile(*pathsFile)
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableCompression: true}}
	table := map[string]*entry{}
	for p := range strings.SplitSeq(string(data), "\n") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		e := &entry{}
		for _, enc := range []string{"br", "gzip", ""} {
			v, err := fetch(ctx, client, strings.TrimRight(*from, "/")+p, enc)
			if err != nil {
				return err
			}
			switch v.hdr.Get("Content-Encoding") {
			case "br":
				e.br = v
			case "gzip":
				e.gzip = v
			default:
				if enc == "" {
					e.identity = v
				}
			}
		}
		table[p] = e
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	fmt.Printf("baseline: %d paths on http://%s\n", len(table), ln.Addr())
	srv := &http.Server{
		Handler:           handler(table),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func fetch(ctx context.Context, c *http.Client, u, enc string) (*variant, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if enc != "" {
		req.Header.Set("Accept-Encoding", enc)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	hdr := http.Header{}
	for _, k := range []string{"Content-Type", "Content-Encoding", "Etag", "Cache-Control", "Vary"} {
		if v := resp.Header.Values(k); len(v) > 0 {
			hdr[k] = v
		}
	}
	hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
	return &variant{body: body, hdr: hdr}, nil
}

func handler(table map[string]*entry) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := table[r.URL.Path]
		if e == nil {
			http.NotFound(w, r)
			return
		}
		v := e.identity
		ae := r.Header.Get("Accept-Encoding")
		switch {
		case e.br != nil && strings.Contains(ae, "br"):
			v = e.br
		case e.gzip != nil && strings.Contains(ae, "gzip"):
			v = e.gzip
		}
		hdr := w.Header()
		for k, vs := range v.hdr {
			hdr[k] = vs
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(v.body)
	})
}
