// Command census loads a jig-server's census: it fills a namespace with
// the reports of N projects (POST /census/@ns, many at once), then times
// the census views, and prints what the targets name:
//
//	census -url http://127.0.0.1:8080 -ns @scale0 -n 100000 -c 32 -token ADMIN
//
// Each project reports 3 of the namespace's registries, at versions and
// states drawn at random (most on the latest, clean). Requests carry
// X-Forwarded-For addresses from a large pool, so that a server started
// with TRUST_PROXY=true and a raised rate limit budgets them apart.
// With -history DAYS it first records DAYS days of history into the
// state database (-state: a SQLite file or a postgres:// URL), each a
// snapshot of the counts as they are after that day's share of the
// reports, so that ?history= has days to read.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/state/postgres"
	"github.com/jigkit/jig/registryserver/state/sqlite"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "census:", err)
		os.Exit(1)
	}
}

type bench struct {
	url, ns, token string
	client         *http.Client
	registries     []string
	versions       map[string][]string
	seq            atomic.Uint64
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("census", flag.ContinueOnError)
	url := fs.String("url", "http://127.0.0.1:8080", "server")
	ns := fs.String("ns", "@scale0", "namespace to report to")
	n := fs.Int("n", 100000, "projects")
	c := fs.Int("c", 32, "concurrent reporters")
	token := fs.String("token", "", "admin token (reads the views)")
	views := fs.Int("views", 500, "requests per view timed")
	history := fs.Int("history", 0, "days of history to record while filling (needs -state)")
	stateURL := fs.String("state", "", "the server's state database: a SQLite file or a postgres:// URL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b := &bench{url: *url, ns: *ns, token: *token, versions: map[string][]string{},
		client: &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: *c * 2}}}
	if err := b.discover(ctx); err != nil {
		return err
	}
	if *history > 0 && *stateURL == "" {
		return errors.New("-history needs -state")
	}
	// The state database is opened after the first reports: the server
	// creates a SQLite file with its first write.
	var st state.Store
	defer func() {
		if st != nil {
			st.Close()
		}
	}()
	// Fill in as many rounds as days of history (one round without it),
	// timing the last tenth of the reports on its own: the rate at N.
	rounds := max(*history, 1)
	start := time.Now()
	var tail time.Duration
	sent := 0
	for day := range rounds {
		upTo := *n * (day + 1) / rounds
		if day == rounds-1 {
			tenth := upTo - *n/10
			if err := b.fill(ctx, sent, tenth, *c); err != nil {
				return err
			}
			t := time.Now()
			if err := b.fill(ctx, tenth, upTo, *c); err != nil {
				return err
			}
			tail = time.Since(t)
		} else if err := b.fill(ctx, sent, upTo, *c); err != nil {
			return err
		}
		sent = upTo
		if *history > 0 && st == nil {
			var err error
			if st, err = openState(ctx, *stateURL); err != nil {
				return err
			}
		}
		if st != nil {
			if err := st.Snapshot(ctx, time.Now().UTC().AddDate(0, 0, day-rounds)); err != nil {
				return err
			}
		}
	}
	total := time.Since(start)
	fmt.Printf("filled %d projects in %.1f s: %.0f reports/s overall, %.0f reports/s for the last %d (at %d projects)\n",
		*n, total.Seconds(), float64(*n)/total.Seconds(), float64(*n/10)/tail.Seconds(), *n/10, *n)
	// Replacing reports of existing projects: the steady state of CI.
	t := time.Now()
	if err := b.fill(ctx, 0, *n/10, *c); err != nil {
		return err
	}
	fmt.Printf("replaced %d reports of existing projects: %.0f reports/s\n", *n/10, float64(*n/10)/time.Since(t).Seconds())
	reg := b.registries[0]
	for _, v := range []struct{ name, path string }{
		{"GET /census/" + b.ns, "/census/" + b.ns},
		{"GET /census/" + b.ns + "/" + reg, "/census/" + b.ns + "/" + reg},
		{"GET …/" + reg + "?history=90d", "/census/" + b.ns + "/" + reg + "?history=90d"},
	} {
		p50, p95, p99, err := b.time(ctx, v.path, *views)
		if err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		fmt.Printf("%-48s p50 %6.1f ms  p95 %6.1f ms  p99 %6.1f ms\n", v.name, ms(p50), ms(p95), ms(p99))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func openState(ctx context.Context, url string) (state.Store, error) {
	switch {
	case len(url) > 11 && url[:11] == "postgres://":
		return postgres.Open(ctx, url)
	}
	return sqlite.Open(ctx, url)
}

// discover reads the namespace's registries and their versions.
func (b *bench) discover(ctx context.Context) error {
	var list struct {
		Registries []string `json:"registries"`
	}
	if err := b.getJSON(ctx, "/namespaces/"+b.ns+"/registries", &list); err != nil {
		return err
	}
	if len(list.Registries) < 3 {
		return fmt.Errorf("%s has %d registries; plant at least 3", b.ns, len(list.Registries))
	}
	b.registries = list.Registries[:min(len(list.Registries), 20)]
	for _, r := range b.registries {
		var vl struct {
			Versions []string `json:"versions"`
		}
		if err := b.getJSON(ctx, "/registries/"+b.ns+"/"+r+"/versions", &vl); err != nil {
			return err
		}
		b.versions[r] = vl.Versions
	}
	return nil
}

func (b *bench) getJSON(ctx context.Context, path string, v any) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.url+path, nil)
	res, err := b.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, res.Status)
	}
	return json.NewDecoder(res.Body).Decode(v)
}

// report is project i's report: three registries, most on the latest
// version and clean.
func (b *bench) report(i int) []byte {
	r := rand.New(rand.NewPCG(uint64(i), b.seq.Add(1)))
	rep := wire.CensusReport{Project: fmt.Sprintf("https://git.example/org/project-%06d.git", i), Branch: "main", Commit: "0123456789abcdef", Jig: "bench"}
	for _, k := range r.Perm(len(b.registries))[:3] {
		path := b.registries[k]
		vs := b.versions[path]
		v := vs[0]
		if r.IntN(3) == 0 {
			v = vs[r.IntN(len(vs))]
		}
		e := wire.CensusEntry{Path: path, Version: v, State: wire.CensusClean}
		if r.IntN(5) == 0 {
			e.State, e.Drifted = wire.CensusModified, []string{fmt.Sprintf("src/file-%d.ts", r.IntN(40)), "package.json"}
			slices.Sort(e.Drifted)
		}
		rep.Registries = append(rep.Registries, e)
	}
	data, _ := json.Marshal(rep)
	return data
}

// fill sends the reports of projects [from, to) with c reporters.
func (b *bench) fill(ctx context.Context, from, to, c int) error {
	var next atomic.Int64
	next.Store(int64(from))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for w := range c {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= to || ctx.Err() != nil {
					return
				}
				if err := b.post(ctx, w, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

func (b *bench) post(ctx context.Context, worker, i int) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, b.url+"/census/"+b.ns, bytes.NewReader(b.report(i)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+b.token)
	req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.%d", worker, i>>8&255, i&255))
	res, err := b.client.Do(req)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /census/%s: %s %s", b.ns, res.Status, body)
	}
	return nil
}

// time GETs path n times, one at a time, and returns the percentiles.
func (b *bench) time(ctx context.Context, path string, n int) (p50, p95, p99 time.Duration, err error) {
	ds := make([]time.Duration, 0, n)
	for i := range n {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.url+path, nil)
		req.Header.Set("Authorization", "Bearer "+b.token)
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.255.%d.%d", i>>8&255, i&255))
		t := time.Now()
		res, err := b.client.Do(req)
		if err != nil {
			return 0, 0, 0, err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return 0, 0, 0, fmt.Errorf("%s", res.Status)
		}
		ds = append(ds, time.Since(t))
	}
	slices.Sort(ds)
	return ds[n/2], ds[n*95/100], ds[n*99/100], nil
}
