package registryserver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/jigkit/jig/registryserver"
)

// Small GET bodies leave their Content-Length to the server (one header
// fewer for the handler to build): over HTTP/1.1 and h2c alike, every
// GET still arrives with a Content-Length equal to its body, never
// chunked, and HEAD announces the same length.
func TestContentLengthOnTheWire(t *testing.T) {
	t.Parallel()
	ts := httptest.NewUnstartedServer(newHandler(t))
	registryserver.EnableH2C(ts.Config)
	ts.Start()
	defer ts.Close()

	h1 := &http.Transport{DisableCompression: true}
	defer h1.CloseIdleConnections()
	h2c := &http.Transport{DisableCompression: true, Protocols: new(http.Protocols)}
	h2c.Protocols.SetUnencryptedHTTP2(true)
	defer h2c.CloseIdleConnections()

	paths := []string{
		"/registries/@main/runtimes/node",
		"/registries/@main/runtimes/node/1.1.0",
		"/registries/@main/runtimes/node/1.1.0/files/templates/.gitignore",
		"/schemas/registry-item.json",
		"/presets/node",
	}
	for _, rt := range []struct {
		name  string
		rt    http.RoundTripper
		proto string
	}{{"HTTP/1.1", h1, "HTTP/1.1"}, {"h2c", h2c, "HTTP/2.0"}} {
		for _, p := range paths {
			for _, enc := range []string{"", "br", "gzip"} {
				roundTrip := func(method string) (*http.Response, []byte) {
					req, _ := http.NewRequestWithContext(t.Context(), method, ts.URL+p, nil)
					if enc != "" {
						req.Header.Set("Accept-Encoding", enc)
					}
					resp, err := rt.rt.RoundTrip(req)
					if err != nil {
						t.Fatal(err)
					}
					defer resp.Body.Close()
					body, err := io.ReadAll(resp.Body)
					if err != nil {
						t.Fatal(err)
					}
					if resp.StatusCode != http.StatusOK || resp.Proto != rt.proto {
						t.Fatalf("%s %s (%s, %q): got %d over %s", method, p, rt.name, enc, resp.StatusCode, resp.Proto)
					}
					return resp, body
				}
				get, body := roundTrip(http.MethodGet)
				if cl := get.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) || len(get.TransferEncoding) != 0 {
					t.Errorf("GET %s (%s, %q): Content-Length %q, Transfer-Encoding %q, body %d bytes",
						p, rt.name, enc, cl, get.TransferEncoding, len(body))
				}
				head, _ := roundTrip(http.MethodHead)
				if got, want := head.Header.Get("Content-Length"), get.Header.Get("Content-Length"); got != want {
					t.Errorf("HEAD %s (%s, %q): Content-Length %q, GET had %q", p, rt.name, enc, got, want)
				}
			}
		}
	}
}
