package registryserver

import (
	"net/http"

	"github.com/jigkit/jig/registry/wire"
)

// EnableH2C makes srv accept HTTP/2 over plain TCP (h2c with prior
// knowledge) besides HTTP/1.1 on the same port, and HTTP/2 over TLS when it
// serves TLS, and makes it answer the jig clients that ask ([wire.HeaderH2C])
// that it does: their next requests then share one connection instead of
// opening one per concurrent request. Responses to requests that do not
// ask are unchanged. Call it before srv starts serving; a nil srv.Handler
// stands for [http.DefaultServeMux], as in [http.Server].
func EnableH2C(srv *http.Server) {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	srv.Protocols = p
	next := srv.Handler
	if next == nil {
		next = http.DefaultServeMux
	}
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 1 && r.TLS == nil && len(r.Header[wire.HeaderH2C]) > 0 {
			w.Header()[wire.HeaderH2C] = h2cYes
		}
		next.ServeHTTP(w, r)
	})
}

// h2cYes is the answer's value, shared so the hot path does not allocate.
var h2cYes = []string{"1"}
