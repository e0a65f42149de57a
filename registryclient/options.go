package registryclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"strings"
	"time"

	"github.com/jigkit/jig/registryclient/cache"
)

// Option configures a [Client] built by [New].
type Option func(*options) error

type options struct {
	token         string
	tokenSource   TokenSource
	headers       map[string]string
	httpClient    *http.Client
	timeout       time.Duration
	retryMax      int
	retryMaxWait  time.Duration
	userAgent     string
	namespace     string
	maxJSONBytes  int64
	maxFileBytes  int64
	retryBaseWait time.Duration
	retryNotify   func(attempt int, wait time.Duration, err error)
	cache         *cache.Cache
	mode          Mode
	notice        func(string)
	trust         *Trust // nil: no signing policy (WithTrust)
	// fallbackMax and fallbackConc bound the search fallback (search.go);
	// 0 means the default.
	fallbackMax, fallbackConc int
	deadline                  time.Time     // zero: none (WithDeadline)
	idleTimeout               time.Duration // 0: none (WithIdleTimeout)
	trace                     func(Trace)   // nil: none (WithTrace)
}

// Defaults used by [New].
const (
	DefaultTimeout      = 30 * time.Second
	DefaultRetryMax     = 3
	DefaultRetryMaxWait = 60 * time.Second
	DefaultMaxJSONBytes = 4 << 20
	DefaultMaxFileBytes = 32 << 20
	DefaultIdleTimeout  = 15 * time.Second
)

func defaultOptions() options {
	return options{
		timeout:       DefaultTimeout,
		retryMax:      DefaultRetryMax,
		retryMaxWait:  DefaultRetryMaxWait,
		retryBaseWait: 250 * time.Millisecond,
		userAgent:     "jig",
		maxJSONBytes:  DefaultMaxJSONBytes,
		maxFileBytes:  DefaultMaxFileBytes,
		idleTimeout:   DefaultIdleTimeout,
	}
}

// WithDeadline ends every request of the client, retries and waits between
// them included, at t: a request still running then fails with an error
// wrapping [ErrDeadline]. Several clients given the same t share one
// overall budget, which is how the jig CLI bounds a whole command. The
// default is no deadline (each request is still bounded by [WithTimeout]).
func WithDeadline(t time.Time) Option {
	return func(o *options) error {
		o.deadline = t
		return nil
	}
}

// WithIdleTimeout fails a request whose response body makes no progress
// (not one byte arrives) for d, so a stalled server is given up on without
// waiting for the whole request timeout. Zero disables it. The default is
// [DefaultIdleTimeout] (15s).
func WithIdleTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return fmt.Errorf("registryclient: negative idle timeout %s", d)
		}
		o.idleTimeout = d
		return nil
	}
}

// WithToken sends "Authorization: Bearer <token>" with every request to the
// client's own origin. It overrides an Authorization header given with
// [WithHeaders]. The default is no token.
func WithToken(token string) Option {
	return func(o *options) error {
		token = strings.TrimSpace(token)
		if strings.ContainsAny(token, "\r\n") {
			return errors.New("token must not contain line breaks")
		}
		o.token = token
		return nil
	}
}

// TokenSource gives the token of a request when it is sent: a session of
// jig login --sso refreshes its token here when it has expired. An error
// fails the request as it is, without retries.
type TokenSource func(ctx context.Context) (string, error)

// WithTokenSource sends "Authorization: Bearer <token>" with the token
// ts gives at each request, in place of [WithToken]'s. The default is
// none.
func WithTokenSource(ts TokenSource) Option {
	return func(o *options) error {
		o.tokenSource = ts
		return nil
	}
}

// WithHeaders sends the given headers with every request to the client's own
// origin (never across a redirect to another origin). Calling it again adds
// to the headers already given. The default is no custom headers.
func WithHeaders(h map[string]string) Option {
	return func(o *options) error {
		if o.headers == nil {
			o.headers = map[string]string{}
		}
		for k, v := range h {
			if k == "" || strings.ContainsAny(k, " \t\r\n:") || strings.ContainsAny(v, "\r\n") {
				return fmt.Errorf("invalid header %q: a header name has no spaces or ':' and a value no line breaks", k)
			}
			o.headers[textproto.CanonicalMIMEHeaderKey(k)] = v
		}
		return nil
	}
}

// WithHTTPClient makes the client send requests through a copy of hc. The
// copy's CheckRedirect is wrapped so credentials never follow a redirect to
// another origin. The default is a client with its own transport that honours
// HTTP_PROXY, HTTPS_PROXY and NO_PROXY.
func WithHTTPClient(hc *http.Client) Option {
	return func(o *options) error {
		if hc == nil {
			return errors.New("registryclient: WithHTTPClient(nil)")
		}
		o.httpClient = hc
		return nil
	}
}

// WithTimeout bounds each HTTP request, body included. Zero means no
// timeout. The default is [DefaultTimeout] (30s), also applied to a client
// given with [WithHTTPClient] unless WithTimeout(0) is used.
func WithTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return fmt.Errorf("registryclient: negative timeout %s", d)
		}
		o.timeout = d
		return nil
	}
}

// WithRetry sets how many times an idempotent request (GET, HEAD) is retried
// after a network error, a 429 or a 5xx, and the longest single wait. Waits
// back off exponentially from 250ms; a 429's Retry-After is honoured when it
// is at most maxWait, otherwise a [*RateLimitError] is returned at once.
// max 0 disables retries. The default is [DefaultRetryMax] (3) and
// [DefaultRetryMaxWait] (60s).
func WithRetry(max int, maxWait time.Duration) Option {
	return func(o *options) error {
		if max < 0 || max > 20 {
			return fmt.Errorf("registryclient: retry count %d out of range 0..20", max)
		}
		if maxWait < 0 {
			return fmt.Errorf("registryclient: negative retry wait %s", maxWait)
		}
		o.retryMax = max
		o.retryMaxWait = maxWait
		return nil
	}
}

// WithUserAgent sets the User-Agent header. The default is "jig".
func WithUserAgent(ua string) Option {
	return func(o *options) error {
		if strings.ContainsAny(ua, "\r\n") {
			return errors.New("registryclient: user agent must not contain line breaks")
		}
		o.userAgent = ua
		return nil
	}
}

// WithNamespace names the namespace this source was configured for (e.g.
// "@company"). It is used in errors about requests that concern the source as
// a whole (/namespaces, /health). The default is "".
func WithNamespace(ns string) Option {
	return func(o *options) error {
		o.namespace = ns
		return nil
	}
}

// WithMaxBodySize sets the largest response body accepted for JSON documents
// and for registry files. Larger responses fail with an error wrapping
// [ErrTooLarge]. The defaults are [DefaultMaxJSONBytes] (4 MiB) and
// [DefaultMaxFileBytes] (32 MiB).
func WithMaxBodySize(jsonBytes, fileBytes int64) Option {
	return func(o *options) error {
		if jsonBytes <= 0 || fileBytes <= 0 {
			return errors.New("registryclient: body size limits must be positive")
		}
		o.maxJSONBytes, o.maxFileBytes = jsonBytes, fileBytes
		return nil
	}
}

// WithRetryNotify calls fn before each retry with the attempt number (1 for
// the first retry), the wait about to start and the error that caused it,
// e.g. to tell a person why a command pauses after a 429. fn must be safe
// for concurrent use. The default is no notification.
func WithRetryNotify(fn func(attempt int, wait time.Duration, err error)) Option {
	return func(o *options) error {
		o.retryNotify = fn
		return nil
	}
}
