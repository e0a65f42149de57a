package registryserver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
)

// EnableH2C answers the jig client's question and serves h2c; a request
// that does not ask gets the response it got before.
func TestEnableH2C(t *testing.T) {
	t.Parallel()
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Proto)
	}))
	registryserver.EnableH2C(ts.Config)
	ts.Start()
	defer ts.Close()

	h2c := &http.Transport{Protocols: new(http.Protocols)}
	h2c.Protocols.SetUnencryptedHTTP2(true)
	defer h2c.CloseIdleConnections()
	tests := []struct {
		name      string
		rt        http.RoundTripper
		ask       bool
		wantProto string
		wantAns   string
	}{
		{name: "HTTP/1.1, not asking", rt: http.DefaultTransport, wantProto: "HTTP/1.1"},
		{name: "HTTP/1.1, asking", rt: http.DefaultTransport, ask: true, wantProto: "HTTP/1.1", wantAns: "1"},
		{name: "h2c", rt: h2c, ask: true, wantProto: "HTTP/2.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL, nil)
			if tt.ask {
				req.Header.Set(wire.HeaderH2C, "1")
			}
			resp, err := tt.rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if string(b) != tt.wantProto {
				t.Errorf("got %s, want %s", b, tt.wantProto)
			}
			if got := resp.Header.Get(wire.HeaderH2C); got != tt.wantAns {
				t.Errorf("got %s %q, want %q", wire.HeaderH2C, got, tt.wantAns)
			}
		})
	}

	// Over TLS the answer is never given: ALPN offers HTTP/2 there.
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	registryserver.EnableH2C(tlsSrv.Config)
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, tlsSrv.URL, nil)
	req.Header.Set(wire.HeaderH2C, "1")
	resp, err := tlsSrv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get(wire.HeaderH2C); got != "" {
		t.Errorf("got %s %q over TLS, want none", wire.HeaderH2C, got)
	}
}
