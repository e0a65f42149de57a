package registryclient

import (
	"errors"
	"fmt"
	"github.com/jigkit/jig/registry/wire"
	"net/http"
	"strings"
	"time"
)

var (
	// ErrNotFound is matched (errors.Is) by a [*StatusError] with status 404.
	ErrNotFound = errors.New("not found")
	// ErrUnauthorized is matched by a [*StatusError] with status 401: a
	// token is missing, unknown or expired.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrForbidden is matched by a [*StatusError] with status 403: the
	// namespace is not allowed or the token lacks a permission.
	ErrForbidden = errors.New("forbidden")
	// ErrTooLarge is wrapped when a response body exceeds the client's
	// size limit for that kind of response.
	ErrTooLarge = errors.New("response body too large")
	// ErrNotConfigured is matched by a [*NotConfiguredError]: no source is
	// configured for a namespace.
	ErrNotConfigured = errors.New("no registry configured")
	// ErrInvalidConfig is wrapped by every error about an unreadable or
	// invalid rc file or entry.
	ErrInvalidConfig = errors.New("invalid registry configuration")
	// ErrDeadline is wrapped when the deadline given with [WithDeadline]
	// passes before a request (with its retries) completes.
	ErrDeadline = errors.New("deadline exceeded")
	// ErrInvalidAdvertisement is wrapped when a server advertises a
	// default namespace that is not a valid namespace other than
	// @presets ([Client.DefaultNamespace]); the value is never used.
	ErrInvalidAdvertisement = errors.New("invalid default namespace advertised")
)

// StatusError is returned for a non-2xx response. Code and Message come from
// the server's [wire.Error] body when it has one. Registry names what
// the request concerned (an identifier such as "@main/quality/eslint@1.0.0",
// a namespace, "@presets/node"), or the client's namespace (see
// [WithNamespace]) for requests about the whole source. URL is the request URL
// with any user info removed. Error never includes credentials.
type StatusError struct {
	StatusCode int
	Code       wire.Code
	Message    string
	Registry   string
	URL        string
}

// Error reads "<status> <text> fetching <registry> (<url>): <message> [<code>]".
func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Registry != "" {
		fmt.Fprintf(&b, " fetching %s", e.Registry)
	}
	if e.URL != "" {
		fmt.Fprintf(&b, " (%s)", e.URL)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " [%s]", e.Code)
	}
	return b.String()
}

// Is makes errors.Is match [ErrNotFound], [ErrUnauthorized] and
// [ErrForbidden] by status code.
func (e *StatusError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized
	case ErrForbidden:
		return e.StatusCode == http.StatusForbidden
	}
	return false
}

// RateLimitError is returned when the server still answers 429 after the
// client's retries, or asks for a wait longer than the client accepts.
// RetryAfter is the server's Retry-After (0 when absent). It unwraps to the
// 429 [*StatusError].
type RateLimitError struct {
	RetryAfter time.Duration
	Err        *StatusError
}

// Error says the request was rate limited and when to try again.
func (e *RateLimitError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("rate limited; retry after %s: %v", e.RetryAfter, e.Err)
	}
	return fmt.Sprintf("rate limited: %v", e.Err)
}

// Unwrap returns the 429 [*StatusError].
func (e *RateLimitError) Unwrap() error { return e.Err }

// NetworkError is returned when a request got no HTTP response at all
// (connection refused, DNS failure, timeout, TLS error). URL is the request
// URL with any user info removed.
type NetworkError struct {
	Method string
	URL    string
	Err    error
}

// Error reads "<method> <url>: <cause>".
func (e *NetworkError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Method, e.URL, e.Err)
}

// Unwrap returns the underlying transport error.
func (e *NetworkError) Unwrap() error { return e.Err }

// NotConfiguredError is returned by [*Sources] and a [Resolver] for a
// namespace that has no entry (in the rc file, or among the entries given
// to [NewSources]). It matches [ErrNotConfigured].
type NotConfiguredError struct {
	Namespace string
	// DefaultsAsked is set by [*Sources] when it looked for a source that
	// names Namespace as its default namespace (an entry's
	// defaultNamespace, a server's advertisement) and found none: such a
	// setting could then make the namespace resolve.
	DefaultsAsked bool
}

// Error names the namespace.
func (e *NotConfiguredError) Error() string {
	return "No registry configured for namespace " + e.Namespace
}

// MissingURLError is returned for a configured source without a url. It
// matches [ErrInvalidConfig].
type MissingURLError struct {
	Namespace string
}

// Error names the namespace.
func (e *MissingURLError) Error() string {
	return fmt.Sprintf("%s: registry %s has no url", ErrInvalidConfig, e.Namespace)
}

// Unwrap returns [ErrInvalidConfig].
func (e *MissingURLError) Unwrap() error { return ErrInvalidConfig }

// Is matches [ErrNotConfigured].
func (e *NotConfiguredError) Is(target error) bool { return target == ErrNotConfigured }

// NotSupportedError is returned when a server lacks an optional route that
// jig servers have, such as the preset listing (GET /presets) the reference
// server does not serve. It matches [ErrNotSupported].
type NotSupportedError struct {
	URL    string // the server's base URL, without user info
	Route  string // the missing route, "/presets"
	Action string // what could not be done, "list presets"
}

// Error reads "<url> cannot <action>: not supported by this server".
func (e *NotSupportedError) Error() string {
	return fmt.Sprintf("%s cannot %s: %v", e.URL, e.Action, ErrNotSupported)
}

// Unwrap returns [ErrNotSupported].
func (e *NotSupportedError) Unwrap() error { return ErrNotSupported }
