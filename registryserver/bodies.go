package registryserver

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/jigkit/jig/registry/wire"
)

// Defaults of the request-body bounds (see [WithUploadIdleTimeout],
// [WithUploadTimeout] and [WithMaxConcurrentUploads]).
const (
	DefaultUploadIdleTimeout    = 30 * time.Second
	DefaultUploadTimeout        = 10 * time.Minute
	DefaultMaxConcurrentUploads = 16
	// uploadsBusyRetryAfter is the Retry-After of a 503 for a full upload
	// slot, in seconds.
	uploadsBusyRetryAfter = 10
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

// takesBody reports whether the request is for a route that reads a
// request body: the uploads and the web catalog's forms, all of them POST.
func takesBody(r *http.Request) bool { return r.Method == http.MethodPost }

// guardBody bounds how the request's body is read, before any route runs:
// a route that reads none never waits for it ([refuseBody]); one that
// does reads it through the idle timeout ([idleBody]).
func (h *Handler) guardBody(c echo.Context) {
	req := c.Request()
	switch {
	case !hasBody(req):
	case takesBody(req):
		req.Body = newIdleBody(c, h.pub.idleTimeout, h.pub.uploadTimeout)
	default:
		refuseBody(c)
	}
}

// hasBody reports whether the request announces a body.
func hasBody(r *http.Request) bool {
	return r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody
}

// refuseBody makes sure the server never waits for the body of a request
// whose route reads none (a GET with a body trickled one byte at a time
// must not hold the connection): the body is never read and the
// connection is closed after the answer.
func refuseBody(c echo.Context) {
	resp := c.Response()
	resp.Header().Set(echo.HeaderConnection, "close")
	// Where the server supports it, no read may wait for the body, not
	// even the one net/http does after the handler to reuse a connection.
	_ = http.NewResponseController(resp).SetReadDeadline(time.Now())
}

// idleBody is a request body whose every read must make progress within
// idle, and whose whole must arrive before until: before each read it
// moves the connection's read deadline to the earlier of the two.
type idleBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	idle  time.Duration
	total time.Duration
	until time.Time
	// ok is false once the server said it cannot set deadlines.
	ok bool
}

func newIdleBody(c echo.Context, idle, total time.Duration) *idleBody {
	req := c.Request()
	return &idleBody{ReadCloser: req.Body, rc: http.NewResponseController(c.Response()), idle: idle,
		total: total, until: time.Now().Add(total), ok: true}
}

func (b *idleBody) Read(p []byte) (int, error) {
	overall := false
	if b.ok {
		d := time.Now().Add(b.idle)
		if d.After(b.until) {
			d, overall = b.until, true
		}
		if err := b.rc.SetReadDeadline(d); err != nil {
			b.ok = false
		}
	}
	n, err := b.ReadCloser.Read(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		err = &uploadTimeoutError{idle: b.idle, total: b.total, overall: overall, err: err}
	}
	return n, err
}

// uploadTimeoutError is a body read that made no progress within the idle
// timeout, or a body still arriving at the end of the upload timeout
// (overall).
type uploadTimeoutError struct {
	idle, total time.Duration
	overall     bool
	err         error
}

func (e *uploadTimeoutError) Error() string {
	if e.overall {
		return fmt.Sprintf("upload not finished after %s: %v", e.total, e.err)
	}
	return fmt.Sprintf("no upload progress for %s: %v", e.idle, e.err)
}

func (e *uploadTimeoutError) Unwrap() error { return e.err }

// uploadTimeout is the answer to a stalled upload. Like every error
// answered to a request with a body, it closes the connection (see
// [Handler.handleError]).
func uploadTimeout(err *uploadTimeoutError) error {
	if err.overall {
		return &apiError{code: wire.CodeRequestTimeout,
			msg: fmt.Sprintf("The upload took longer than %s, the most the server allows; publish again over a faster connection", err.total), cause: err}
	}
	return &apiError{code: wire.CodeRequestTimeout,
		msg: fmt.Sprintf("The upload sent nothing for %s; check the connection and publish again", err.idle), cause: err}
}

// acquireUpload takes an upload slot, or answers 503 with Retry-After
// without reading the body when every slot is taken. release must be
// called when ok.
func (h *Handler) acquireUpload(c echo.Context) (release func(), err error) {
	select {
	case h.pub.slots <- struct{}{}:
		return func() { <-h.pub.slots }, nil
	default:
	}
	refuseBody(c)
	c.Response().Header().Set(headerRetryAfter, strconv.Itoa(uploadsBusyRetryAfter))
	return nil, newAPIError(wire.CodeTooManyUploads,
		fmt.Sprintf("The server is receiving %d uploads already; try again in %d s", cap(h.pub.slots), uploadsBusyRetryAfter))
}
