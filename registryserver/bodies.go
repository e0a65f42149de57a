package registryserver

import (
	"fmt"
	"time"
)

// Defaults of the request-body bounds (see [WithUploadIdleTimeout],
// [WithUploadTimeout] and [WithMaxConcurrentUploads]).
const (
	DefaultUploadIdleTimeout    = 30 * time.Second
	DefaultUploadTimeout        = 10 * time.Minute
	DefaultMaxConcurrentUploads = 16
)

// WithUploadIdleTimeout bounds how long an upload (POST /registries, POST
// /presets, and the web catalog's forms) may go without sending a byte of
// its body: a client that
// stalls longer gets 408 REQUEST_TIMEOUT and its connection is closed. A
// slow client that keeps sending is not cut off. It takes effect when the
// handler runs in a net/http server (it sets the connection's read
// deadline). The default is [DefaultUploadIdleTimeout].
func WithUploadIdleTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("upload idle timeout must be positive, got %s", d)
		}
		o.publish.idleTimeout = d
		return nil
	}
}

// WithUploadTimeout bounds how long the whole body of an upload (POST
// /registries, POST /presets, and the web catalog's forms) may take to
// arrive, however steadily it trickles in: a client still sending after d
// gets 408 REQUEST_TIMEOUT and its connection is closed. With
// [WithUploadIdleTimeout] it keeps a slow-loris client from holding an
// upload slot. It takes effect when the handler runs in a net/http server
// (it sets the connection's read deadline). The default is
// [DefaultUploadTimeout], enough for 100 MiB at about 1.5 Mbit/s.
func WithUploadTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("upload timeout must be positive, got %s", d)
		}
		o.publish.uploadTimeout = d
		return nil
	}
}

// WithMaxConcurrentUploads bounds how many uploads are received at the same
// time; one more gets 503 TOO_MANY_UPLOADS with Retry-After, before its
// body is read. The default is [DefaultMaxConcurrentUploads].
func WithMaxConcurrentUploads(n int) Option {
	return func(o *options) error {
		if n <= 0 {
			return fmt.Errorf("max concurrent uploads must be positive, got %d", n)
		}
		o.publish.maxUploads = n
		return nil
	}
}
