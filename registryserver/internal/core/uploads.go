package core

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/jigkit/jig/registry/wire"
	"github.com/labstack/echo/v4"
)

// uploadsBusyRetryAfter is the Retry-After of a 503 for a full upload
// slot, in seconds.
const uploadsBusyRetryAfter = 10

// HeaderRetryAfter is the Retry-After header, in Go's canonical form.
const HeaderRetryAfter = "Retry-After"

// UploadGate bounds the request bodies the server receives: how long a
// body may stall (idle) or take in all (total), and how many are received
// at once (one token of slots each).
type UploadGate struct {
	Idle, Total time.Duration
	Slots       chan struct{}
}

// takesBody reports whether the request is for a route that reads a
// request body: the uploads and the web catalog's forms, all of them POST.
func takesBody(r *http.Request) bool { return r.Method == http.MethodPost }

// GuardBody bounds how the request's body is read, before any route runs:
// a route that reads none never waits for it ([refuseBody]); one that
// does reads it through the idle timeout ([idleBody]).
func (h *Core) GuardBody(c echo.Context) {
	req := c.Request()
	switch {
	case !hasBody(req):
	case takesBody(req):
		req.Body = newIdleBody(c, h.Uploads.Idle, h.Uploads.Total)
	default:
		RefuseBody(c)
	}
}

// hasBody reports whether the request announces a body.
func hasBody(r *http.Request) bool {
	return r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody
}

// RefuseBody makes sure the server never waits for the body of a request
// whose route reads none (a GET with a body trickled one byte at a time
// must not hold the connection): the body is never read and the
// connection is closed after the answer.
func RefuseBody(c echo.Context) {
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
		err = &UploadTimeoutError{idle: b.idle, total: b.total, overall: overall, err: err}
	}
	return n, err
}

// UploadTimeoutError is a body read that made no progress within the idle
// timeout, or a body still arriving at the end of the upload timeout
// (overall).
type UploadTimeoutError struct {
	idle, total time.Duration
	overall     bool
	err         error
}

func (e *UploadTimeoutError) Error() string {
	if e.overall {
		return fmt.Sprintf("upload not finished after %s: %v", e.total, e.err)
	}
	return fmt.Sprintf("no upload progress for %s: %v", e.idle, e.err)
}

func (e *UploadTimeoutError) Unwrap() error { return e.err }

// UploadTimeout is the answer to a stalled upload. Like every error
// answered to a request with a body, it closes the connection (see
// [Handler.handleError]).
func UploadTimeout(err *UploadTimeoutError) error {
	if err.overall {
		return &APIError{Code: wire.CodeRequestTimeout,
			Msg: fmt.Sprintf("The upload took longer than %s, the most the server allows; publish again over a faster connection", err.total), Cause: err}
	}
	return &APIError{Code: wire.CodeRequestTimeout,
		Msg: fmt.Sprintf("The upload sent nothing for %s; check the connection and publish again", err.idle), Cause: err}
}

// AcquireUpload takes an upload slot, or answers 503 with Retry-After
// without reading the body when every slot is taken. release must be
// called when ok.
func (h *Core) AcquireUpload(c echo.Context) (release func(), err error) {
	select {
	case h.Uploads.Slots <- struct{}{}:
		return func() { <-h.Uploads.Slots }, nil
	default:
	}
	RefuseBody(c)
	c.Response().Header().Set(HeaderRetryAfter, strconv.Itoa(uploadsBusyRetryAfter))
	return nil, NewAPIError(wire.CodeTooManyUploads,
		fmt.Sprintf("The server is receiving %d uploads already; try again in %d s", cap(h.Uploads.Slots), uploadsBusyRetryAfter))
}
