package registryclient

import (
	"context"
	"net/http"
	"time"

	"github.com/jigkit/jig/internal/redact"
)

// Trace describes one HTTP request a client sent (each redirect hop and
// each retry is its own), or one request the cache made unnecessary. It
// never holds a header, so no token.
type Trace struct {
	// Method is the HTTP method; "" for a cache hit.
	Method string
	// URL is the request's URL without user info, with the values of
	// query parameters that may be secrets replaced by "REDACTED"; for
	// a cache hit, what the cache answered (a registry and a file).
	URL string
	// Status is the response's status code, 0 when none came.
	Status int
	// Duration is the time until the response's headers (or the error).
	Duration time.Duration
	// Proto is the response's protocol, "HTTP/1.1" or "HTTP/2.0".
	Proto string
	// Conn says how the request went: "TLS" over TLS, "h2c" for HTTP/2
	// over plain TCP, "plain" for HTTP/1.1 over plain TCP; "" for a cache
	// hit or a request that failed.
	Conn string
	// Cache is "hit" when the cache answered without a request, "miss" for
	// a request of content the cache keeps (a digest index, a manifest, a
	// file, signatures) that it did not hold, "" for the others.
	Cache string
	// Err is the transport error of a request that got no response.
	Err error
}

// WithTrace calls f once per HTTP request of the client and once per
// request the cache answered, with what [Trace] describes. f may be called
// from several goroutines at once. The default is no trace.
func WithTrace(f func(Trace)) Option {
	return func(o *options) error { o.trace = f; return nil }
}

// cacheMissKey marks the context of a request for content the cache keeps.
type cacheMissKey struct{}

// withCacheMiss marks ctx as a request the cache could not answer, when
// the client has a cache.
func (c *Client) withCacheMiss(ctx context.Context) context.Context {
	if c.opts.trace == nil || c.opts.cache == nil {
		return ctx
	}
	return context.WithValue(ctx, cacheMissKey{}, true)
}

// traceHit reports content the cache answered; what names it.
func (c *Client) traceHit(what string) {
	if c.opts.trace != nil {
		c.opts.trace(Trace{URL: what, Cache: "hit"})
	}
}

// tracingTransport is the one place every request of a client with
// [WithTrace] goes through.
type tracingTransport struct {
	next  http.RoundTripper
	trace func(Trace)
}

func (t *tracingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	res, err := t.next.RoundTrip(req)
	tr := Trace{Method: req.Method, URL: redact.Parsed(req.URL), Duration: time.Since(start), Err: err}
	if miss, _ := req.Context().Value(cacheMissKey{}).(bool); miss {
		tr.Cache = "miss"
	}
	if res != nil {
		tr.Status, tr.Proto = res.StatusCode, res.Proto
		switch {
		case res.TLS != nil:
			tr.Conn = "TLS"
		case res.ProtoMajor == 2:
			tr.Conn = "h2c"
		default:
			tr.Conn = "plain"
		}
	}
	t.trace(tr)
	return res, err
}
