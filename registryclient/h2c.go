package registryclient

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/jigkit/jig/registry/wire"
)

// h2cSwitch is registered for the http scheme on the transports that
// [NewTransport] makes. It asks plain-HTTP servers reached without a proxy
// whether they speak HTTP/2 over plain TCP ([wire.HeaderH2C]) and sends
// the GET and HEAD requests to the servers that said so over one h2c
// connection per server, so concurrent requests need no connection each.
// Everything else, and every request after an h2c failure, goes over
// HTTP/1.1 as before.
type h2cSwitch struct {
	outer *http.Transport

	once sync.Once
	h2c  *http.Transport

	mu    sync.Mutex
	hosts map[string]bool // host:port → speaks h2c (false: said so, but failed)
}

// maxH2CHosts bounds the servers one transport remembers.
const maxH2CHosts = 64

// h1Only marks the HTTP/1.1 request the switch itself sends through the
// outer transport, which calls the switch again.
type h1Only struct{}

func newH2CSwitch(outer *http.Transport) *h2cSwitch {
	return &h2cSwitch{outer: outer, hosts: map[string]bool{}}
}

// RoundTrip implements [http.RoundTripper]. [http.ErrSkipAltProtocol]
// hands the request back to the outer transport's HTTP/1.1 path.
func (s *h2cSwitch) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Context().Value(h1Only{}) != nil || !s.eligible(req) {
		return nil, http.ErrSkipAltProtocol
	}
	key := hostPort(req)
	if s.speaksH2C(key) {
		resp, err := s.h2cTransport().RoundTrip(req)
		if err == nil || req.Context().Err() != nil {
			return resp, err
		}
		// Not h2c after all (another server behind the address, an
		// intermediary that passed the question on): HTTP/1.1 from now
		// on, whatever it says.
		s.distrust(key)
	}
	r1 := req.Clone(context.WithValue(req.Context(), h1Only{}, true))
	r1.Header.Set(wire.HeaderH2C, "1")
	r1.Header.Set("Connection", wire.HeaderH2C)
	resp, err := s.outer.RoundTrip(r1)
	if err != nil {
		return nil, err
	}
	if resp.ProtoMajor == 1 && resp.Header.Get(wire.HeaderH2C) == "1" {
		s.learn(key)
	}
	resp.Request = req
	return resp, nil
}

// eligible reports whether req may go over h2c: a GET or HEAD without a
// body (so it can be sent again over HTTP/1.1), to an http:// URL, that no
// proxy handles, with no connection options of its own.
func (s *h2cSwitch) eligible(req *http.Request) bool {
	if req.URL.Scheme != "http" || req.Method != http.MethodGet && req.Method != http.MethodHead {
		return false
	}
	if req.Body != nil && req.Body != http.NoBody {
		return false
	}
	if len(req.Header["Connection"]) > 0 || len(req.Header["Upgrade"]) > 0 {
		return false
	}
	if s.outer.Proxy != nil {
		u, err := s.outer.Proxy(req)
		if err != nil || u != nil {
			return false
		}
	}
	return true
}

// hostPort is the server req goes to, as host:port.
func hostPort(req *http.Request) string {
	port := req.URL.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(strings.ToLower(req.URL.Hostname()), port)
}

func (s *h2cSwitch) speaksH2C(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hosts[key]
}

func (s *h2cSwitch) learn(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, known := s.hosts[key]; known {
		return
	}
	if len(s.hosts) >= maxH2CHosts {
		clear(s.hosts)
	}
	s.hosts[key] = true
}

func (s *h2cSwitch) distrust(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hosts[key] = false
}

// h2cTransport returns the h2c-only transport, made on first use from the
// outer transport's settings as they are then (dialer, timeouts). It opens
// at most one connection per server: concurrent requests wait for it and
// share it as HTTP/2 streams.
func (s *h2cSwitch) h2cTransport() *http.Transport {
	s.once.Do(func() {
		t := s.outer.Clone()
		t.Proxy = nil
		t.Protocols = new(http.Protocols)
		t.Protocols.SetUnencryptedHTTP2(true)
		t.MaxConnsPerHost = 1
		s.h2c = t
	})
	return s.h2c
}
