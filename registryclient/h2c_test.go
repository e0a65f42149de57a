package registryclient_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver"
)

// h2cServer is a test server that records, per request, the protocol it
// came over and whether it asked about h2c, and counts accepted
// connections.
type h2cServer struct {
	*httptest.Server
	conns atomic.Int64
	mu    sync.Mutex
	seen  []string // "HTTP/1.1 ask" / "HTTP/2.0", in order of arrival
}

func (s *h2cServer) log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// newH2CServer starts a server; h2c makes it speak h2c as jig-server does,
// lie makes it answer the question with yes while speaking HTTP/1.1 only.
func newH2CServer(t *testing.T, h2c, lie bool, next http.Handler) *h2cServer {
	t.Helper()
	s := &h2cServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := r.Proto
		if r.Method == "PRI" {
			// An HTTP/1.1-only Go server hands the h2c preface to the
			// handler as a request; the client must give up on h2c.
			e = "PRI"
		}
		if r.Header.Get(wire.HeaderH2C) != "" {
			e += " ask"
		}
		s.mu.Lock()
		s.seen = append(s.seen, e)
		s.mu.Unlock()
		if lie && r.ProtoMajor == 1 {
			w.Header().Set(wire.HeaderH2C, "1")
		}
		if next != nil {
			next.ServeHTTP(w, r)
			return
		}
		_, _ = io.WriteString(w, "ok "+r.URL.Path)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	if h2c {
		registryserver.EnableH2C(s.Config)
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// burst sends one GET, then n concurrent GETs, through tr and checks
// every answer.
func burst(t *testing.T, tr http.RoundTripper, base string, n int) {
	t.Helper()
	hc := &http.Client{Transport: tr}
	get := func(path string) error {
		resp, err := hc.Get(base + path)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(b), "ok /") {
			t.Errorf("GET %s: got %d %q", path, resp.StatusCode, b)
		}
		return nil
	}
	if err := get("/first"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if err := get("/next"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// The transport clients use asks a plain-HTTP server whether it speaks
// h2c and, if it does, sends the rest over one HTTP/2 connection; with
// any other server it stays on HTTP/1.1 and every request still works.
func TestNewTransportH2C(t *testing.T) {
	t.Parallel()
	const n = 12
	tests := []struct {
		name      string
		h2c, lie  bool
		wantProto string // of the requests after the first
		maxConns  int64
	}{
		{name: "jig-server speaks h2c", h2c: true, wantProto: "HTTP/2.0", maxConns: 2},
		{name: "HTTP/1.1 server (the reference)", wantProto: "HTTP/1.1 ask", maxConns: n + 1},
		{name: "server says yes but speaks HTTP/1.1", lie: true, wantProto: "HTTP/1.1 ask", maxConns: 3 * n},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newH2CServer(t, tt.h2c, tt.lie, nil)
			tr := registryclient.NewTransport()
			tr.Proxy = nil
			defer tr.CloseIdleConnections()
			burst(t, tr, srv.URL, n)
			var log []string
			pri := 0
			for _, e := range srv.log() {
				if e == "PRI" {
					pri++
					continue
				}
				log = append(log, e)
			}
			if len(log) != n+1 || log[0] != "HTTP/1.1 ask" {
				t.Fatalf("got requests %q, want %d, the first over HTTP/1.1 asking about h2c", log, n+1)
			}
			if tt.lie && pri == 0 {
				t.Errorf("the client never tried h2c with a server that said it speaks it")
			}
			if tt.lie {
				// Once h2c failed, the transport does not try it again.
				before := len(srv.log())
				burst(t, tr, srv.URL, n)
				for _, e := range srv.log()[before:] {
					if e == "PRI" {
						t.Fatalf("the client tried h2c again after it failed")
					}
				}
			}
			for _, e := range log[1:] {
				if e != tt.wantProto {
					t.Errorf("got a later request as %q, want %q (all: %q)", e, tt.wantProto, log)
					break
				}
			}
			if got := srv.conns.Load(); got > tt.maxConns {
				t.Errorf("got %d connections, want at most %d", got, tt.maxConns)
			}
		})
	}
}

// Through a proxy, and for requests with a body, nothing asks about h2c
// and nothing goes over it.
func TestNewTransportH2CNotThroughProxy(t *testing.T) {
	t.Parallel()
	srv := newH2CServer(t, true, false, nil)
	var viaProxy atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		viaProxy.Add(1)
		if r.Header.Get(wire.HeaderH2C) != "" {
			t.Errorf("the proxy got %s: %q", wire.HeaderH2C, r.Header.Get(wire.HeaderH2C))
		}
		out, _ := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), r.Body)
		out.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	defer proxy.Close()
	pu, _ := url.Parse(proxy.URL)
	tr := registryclient.NewTransport()
	tr.Proxy = http.ProxyURL(pu)
	defer tr.CloseIdleConnections()
	burst(t, tr, srv.URL, 4)
	if viaProxy.Load() != 5 {
		t.Errorf("got %d requests through the proxy, want 5", viaProxy.Load())
	}
	for _, e := range srv.log() {
		if e != "HTTP/1.1" {
			t.Errorf("got a request as %q behind a proxy, want plain HTTP/1.1", e)
		}
	}

	// Without the proxy, a POST is never sent over h2c.
	direct := registryclient.NewTransport()
	direct.Proxy = nil
	defer direct.CloseIdleConnections()
	burst(t, direct, srv.URL, 1)
	resp, err := (&http.Client{Transport: direct}).Post(srv.URL+"/post", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if log := srv.log(); log[len(log)-1] != "HTTP/1.1" {
		t.Errorf("got the POST as %q, want HTTP/1.1 without the question", log[len(log)-1])
	}
}

// A redirect from an h2c server to a server that speaks only HTTP/1.1
// is followed over HTTP/1.1.
func TestNewTransportH2CRedirect(t *testing.T) {
	t.Parallel()
	h1 := newH2CServer(t, false, false, nil)
	h2 := newH2CServer(t, true, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, h1.URL+"/there", http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, "ok "+r.URL.Path)
	}))
	tr := registryclient.NewTransport()
	tr.Proxy = nil
	defer tr.CloseIdleConnections()
	burst(t, tr, h2.URL, 2) // h2 is now known to speak h2c
	resp, err := (&http.Client{Transport: tr}).Get(h2.URL + "/away")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok /there" {
		t.Fatalf("got %q, want the redirect target's answer", b)
	}
	if log := h2.log(); log[len(log)-1] != "HTTP/2.0" {
		t.Errorf("got the redirecting request as %q, want HTTP/2.0", log[len(log)-1])
	}
	if log := h1.log(); len(log) != 1 || log[0] != "HTTP/1.1 ask" {
		t.Errorf("got %q at the HTTP/1.1 server, want one HTTP/1.1 request", log)
	}
}
