package apply_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/apply"
	"github.com/jigkit/jig/registryserver"
)

// newTransport is the transport a jig process starts with.
var newTransport = registryclient.NewTransport

// delayed forwards every request to target after a fixed delay, like a
// distant server.
func delayed(tb testing.TB, target string, d time.Duration, requests *atomic.Int64, wv *waves) string {
	tb.Helper()
	u, err := url.Parse(target)
	if err != nil {
		tb.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := newServer(tb, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		wv.start()
		time.Sleep(d)
		proxy.ServeHTTP(w, r)
	}))
	return srv
}

// latencyProxy listens on loopback and forwards TCP connections to target
// as a link with round-trip time rtt would: bytes take rtt/2 each way,
// and a new connection can carry data only after one rtt (the TCP
// handshake). It counts the connections it accepts.
func latencyProxy(tb testing.TB, target string, rtt time.Duration, conns *atomic.Int64) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	tb.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			wg.Go(func() {
				defer c.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				var pipes sync.WaitGroup
				pipes.Go(func() { delayedCopy(up, c, rtt/2, rtt) })
				pipes.Go(func() { delayedCopy(c, up, rtt/2, 0) })
				pipes.Wait()
			})
		}
	})
	return ln.Addr().String()
}

// delayedCopy copies src to dst, delivering each chunk delay after it was
// read (plus first before the first chunk), in order, then closes dst's
// write side.
func delayedCopy(dst, src net.Conn, delay, first time.Duration) {
	type chunk struct {
		at   time.Time
		data []byte
	}
	ch := make(chan chunk, 256)
	start := time.Now().Add(first)
	go func() {
		defer close(ch)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				at := time.Now().Add(delay)
				if at.Before(start.Add(delay)) {
					at = start.Add(delay)
				}
				ch <- chunk{at, buf[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range ch {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.data); err != nil {
			break
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, src)
}

// waves counts the round trips of requests a server sees: requests that
// start within gap of the previous one belong to the same round trip.
// With a link of round-trip time rtt and gap rtt/2, a request that had to
// wait for an answer starts a new one.
type waves struct {
	mu   sync.Mutex
	gap  time.Duration
	last time.Time
	n    int
}

func (w *waves) start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	if w.n == 0 || now.Sub(w.last) > w.gap {
		w.n++
	}
	w.last = now
}

func (w *waves) reset() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.n
	w.n = 0
	return n
}

// BenchmarkInitNodePreset times "init -t @presets/node" (8 registries and
// their files) as a fresh jig process does it (a new transport per init):
//
//   - local: against a local server over plain HTTP;
//   - delay50ms: behind an HTTP proxy that delays every request by 50 ms;
//   - rtt50ms: behind a TCP link with a 50 ms round trip (connection set-up
//     costs one), plain HTTP, to a server that also speaks h2c as
//     jig-server does ([registryserver.EnableH2C]);
//   - rtt50ms-http1: the same link to a server that speaks only HTTP/1.1,
//     as the reference does;
//   - tls-rtt50ms: the same link to a server speaking TLS with HTTP/2, as
//     jig-server with a certificate does.
//
// It reports requests, TCP connections and TLS handshakes per init, and
// for the 50 ms links the round trips of requests the server saw
// (roundtrips/op: connection and TLS set-up not included) and the elapsed
// time in round trips (rtts/op: set-up and local work included).
//
// bench/scaffold.sh runs it together with the built jig against a
// jig-server on loopback.
func BenchmarkInitNodePreset(b *testing.B) {
	srv := catalogServer(b, nil, nil)
	for _, bc := range []struct {
		name  string
		delay time.Duration // HTTP proxy
		rtt   time.Duration // TCP link
		tls   bool
		h1    bool // the server speaks only HTTP/1.1
	}{{"local", 0, 0, false, false}, {"delay50ms", 50 * time.Millisecond, 0, false, false},
		{"rtt50ms", 0, 50 * time.Millisecond, false, false}, {"rtt50ms-http1", 0, 50 * time.Millisecond, false, true},
		{"tls-rtt50ms", 0, 50 * time.Millisecond, true, false}} {
		b.Run(bc.name, func(b *testing.B) {
			var requests, conns, handshakes atomic.Int64
			wv := &waves{gap: max(bc.delay, bc.rtt) / 2}
			target := srv.URL
			tr := func() *http.Transport { return newTransport() }
			switch {
			case bc.delay > 0:
				target = delayed(b, srv.URL, bc.delay, &requests, wv)
			case bc.tls:
				ts := httptest.NewUnstartedServer(srv.Config.Handler)
				ts.EnableHTTP2 = true
				ts.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
					handshakes.Add(1)
					return nil, nil
				}}
				ts.Config.Handler = counting(srv.Config.Handler, &requests, wv)
				registryserver.EnableH2C(ts.Config)
				ts.StartTLS()
				b.Cleanup(ts.Close)
				pool := x509.NewCertPool()
				pool.AddCert(ts.Certificate())
				target = "https://" + latencyProxy(b, ts.Listener.Addr().String(), bc.rtt, &conns)
				tr = func() *http.Transport {
					t := newTransport()
					t.TLSClientConfig = &tls.Config{RootCAs: pool, ServerName: "example.com"}
					return t
				}
			case bc.rtt > 0:
				ts := httptest.NewUnstartedServer(counting(srv.Config.Handler, &requests, wv))
				if !bc.h1 {
					registryserver.EnableH2C(ts.Config)
				}
				ts.Start()
				b.Cleanup(ts.Close)
				target = "http://" + latencyProxy(b, ts.Listener.Addr().String(), bc.rtt, &conns)
			default:
				ts := httptest.NewUnstartedServer(counting(srv.Config.Handler, &requests, wv))
				ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
					if s == http.StateNew {
						conns.Add(1)
					}
				}
				registryserver.EnableH2C(ts.Config)
				ts.Start()
				b.Cleanup(ts.Close)
				target = ts.URL
			}
			base := b.TempDir()
			rounds := 0
			i := 0
			wv.reset()
			var elapsed time.Duration
			cpu0 := testenv.CPUTime()
			for b.Loop() {
				i++
				t := tr()
				eng, err := apply.New(sourcesFor(b, target, registryclient.WithHTTPClient(&http.Client{Transport: t})))
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				_, err = eng.Run(b.Context(), apply.Request{Dir: filepath.Join(base, fmt.Sprint(i)), Template: "@presets/node", Mode: apply.ModeInit}, false)
				elapsed += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				t.CloseIdleConnections()
				rounds = max(rounds, wv.reset())
			}
			// CPU time of the process (client and server), which the
			// machine's load does not inflate as it does elapsed time.
			b.ReportMetric(float64(testenv.CPUTime()-cpu0)/float64(i)/1e6, "cpu-ms/op")
			if bc.delay > 0 || bc.rtt > 0 {
				b.ReportMetric(float64(rounds), "roundtrips/op")
			}
			b.ReportMetric(float64(requests.Load())/float64(i), "requests/op")
			if bc.delay == 0 {
				b.ReportMetric(float64(conns.Load())/float64(i), "conns/op")
			}
			if bc.tls {
				b.ReportMetric(float64(handshakes.Load())/float64(i), "handshakes/op")
			}
			if bc.rtt > 0 {
				b.ReportMetric(float64(elapsed)/float64(i)/float64(bc.rtt), "rtts/op")
			}
		})
	}
}

// counting counts the requests h serves, and their round trips.
func counting(h http.Handler, n *atomic.Int64, wv *waves) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		wv.start()
		h.ServeHTTP(w, r)
	})
}
