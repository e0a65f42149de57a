// Command loadgen discovers the registries a jig-server serves and sends
// mixed read traffic to it from many distinct forwarded client addresses.
//
// It is the Go fallback of bench/load.sh (which prefers wrk) and the path
// discovery step for both:
//
//	loadgen -url http://127.0.0.1:8080 -paths-only > paths.txt
//	loadgen -url http://127.0.0.1:8080 -paths paths.txt -duration 20s -c 64
//
// Every request carries "Accept-Encoding: br, gzip" and an X-Forwarded-For
// address drawn from -addrs distinct addresses, so with TRUST_PROXY=true
// each address stays well under the per-address rate limit. It prints
// requests per second, latency percentiles and the status codes seen.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	base := fs.String("url", "http://127.0.0.1:8080", "server base URL")
	pathsOnly := fs.Bool("paths-only", false, "print the discovered paths, one a line, and exit")
	pathsFile := fs.String("paths", "", "read paths from this file instead of discovering them")
	duration := fs.Duration("duration", 20*time.Second, "how long to send requests")
	conns := fs.Int("c", 64, "concurrent connections")
	addrs := fs.Int("addrs", 100_000, "distinct X-Forwarded-For addresses")
	freePort := fs.Bool("free-port", false, "print a free TCP port on 127.0.0.1 and exit")
	wait := fs.Duration("wait", 0, "wait up to this long for GET /health to answer 200, then exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *freePort:
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer ln.Close()
		_, err = fmt.Fprintln(stdout, ln.Addr().(*net.TCPAddr).Port)
		return err
	case *wait > 0:
		return waitHealthy(ctx, *base, *wait)
	}
	client := &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			MaxIdleConnsPerHost: *conns,
			MaxConnsPerHost:     *conns,
			DisableCompression:  true, // send our own Accept-Encoding, keep bodies as sent
		},
	}
	var paths []string
	var err error
	if *pathsFile != "" {
		paths, err = readPaths(*pathsFile)
	} else {
		paths, err = discover(ctx, client, strings.TrimRight(*base, "/"))
	}
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return errors.New("no registries to read; is the storage seeded?")
	}
	if *pathsOnly {
		w := bufio.NewWriter(stdout)
		for _, p := range paths {
			fmt.Fprintln(w, p)
		}
		return w.Flush()
	}
	return load(ctx, client, strings.TrimRight(*base, "/"), paths, *duration, *conns, *addrs, stdout)
}

func waitHealthy(ctx context.Context, base string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s/health did not answer 200 within %s (last error: %v)", base, d, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func readPaths(name string) ([]string, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out, nil
}

func getJSON(ctx context.Context, c *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(v)
}

// discover lists latest manifests, versioned manifests and files of every
// registry in every namespace the server shows anonymously.
func discover(ctx context.Context, c *http.Client, base string) ([]string, error) {
	var nss struct{ Namespaces []string }
	if err := getJSON(ctx, c, base+"/namespaces", &nss); err != nil {
		return nil, err
	}
	var paths []string
	for _, ns := range nss.Namespaces {
		var regs struct{ Registries []string }
		if err := getJSON(ctx, c, base+"/namespaces/"+url.PathEscape(ns)+"/registries", &regs); err != nil {
			return nil, err
		}
		for _, r := range regs.Registries {
			dir := "/registries/" + ns + "/" + r
			var vl struct{ Versions []string }
			if err := getJSON(ctx, c, base+dir+"/versions", &vl); err != nil {
				return nil, err
			}
			paths = append(paths, dir)
			for _, v := range vl.Versions {
				paths = append(paths, dir+"/"+v)
				var m struct {
					Files []struct{ Path string }
				}
				if err := getJSON(ctx, c, base+dir+"/"+v, &m); err != nil {
					return nil, err
				}
				for _, f := range m.Files {
					if f.Path == "" {
						continue // content inline in the manifest
					}
					paths = append(paths, dir+"/"+v+"/files/"+strings.TrimPrefix(f.Path, "./"))
				}
			}
		}
	}
	return paths, nil
}

type workerResult struct {
	latencies []time.Duration
	statuses  map[int]int
	errors    int
	bytes     int64
}

func load(ctx context.Context, c *http.Client, base string, paths []string, d time.Duration, conns, addrs int, stdout io.Writer) error {
	ips := make([]string, addrs)
	for i := range ips {
		n := i + 1
		ips[i] = "10." + strconv.Itoa(n>>16&255) + "." + strconv.Itoa(n>>8&255) + "." + strconv.Itoa(n&255)
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	results := make([]workerResult, conns)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conns {
		wg.Go(func() {
			r := &results[w]
			r.statuses = map[int]int{}
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+paths[rng.IntN(len(paths))], nil)
				req.Header.Set("Accept-Encoding", "br, gzip")
				req.Header.Set("X-Forwarded-For", ips[rng.IntN(len(ips))])
				t0 := time.Now()
				resp, err := c.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						r.errors++
					}
					continue
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				r.latencies = append(r.latencies, time.Since(t0))
				r.statuses[resp.StatusCode]++
				r.bytes += n
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	statuses := map[int]int{}
	var errs int
	var bytes int64
	for _, r := range results {
		all = append(all, r.latencies...)
		for k, v := range r.statuses {
			statuses[k] += v
		}
		errs += r.errors
		bytes += r.bytes
	}
	slices.Sort(all)
	pct := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[min(len(all)-1, int(float64(len(all))*p))]
	}
	fmt.Fprintf(stdout, "loadgen: %d requests in %s over %d connections, %d paths, %d addresses\n",
		len(all), elapsed.Round(time.Millisecond), conns, len(paths), addrs)
	fmt.Fprintf(stdout, "requests/s: %.0f\n", float64(len(all))/elapsed.Seconds())
	fmt.Fprintf(stdout, "latency p50 %s  p90 %s  p99 %s  max %s\n", pct(0.50), pct(0.90), pct(0.99), pct(1))
	fmt.Fprintf(stdout, "transfer: %.1f MB/s\n", float64(bytes)/elapsed.Seconds()/1e6)
	fmt.Fprintf(stdout, "statuses: %v  errors: %d\n", statuses, errs)
	if statuses[http.StatusTooManyRequests] > 0 {
		fmt.Fprintln(stdout, "warning: some requests were rate limited; is TRUST_PROXY=true set?")
	}
	return nil
}
