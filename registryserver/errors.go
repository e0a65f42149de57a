package registryserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/storage"
)

// msgInvalidKey is the message of a path the storage cannot hold.
var msgInvalidKey = fmt.Sprintf("Invalid path: each part must be at most %d bytes and the whole path at most %d bytes",
	storage.MaxSegmentLength, storage.MaxKeyLength)

// apiError is an error with its HTTP wire form: the body
// {"code": code, "message": msg}, sent with the status the code table of
// package wire gives code ([wire.Code.Status]). Handlers return it;
// [Handler.handleError] is the one place that writes it. msg is sent to the
// client, so it must never contain a token or a namespace the caller may
// not read. cause, when set, is logged (at error level, for 5xx) and never
// sent.
type apiError struct {
	code  wire.Code
	msg   string
	cause error
	// other is the status of a [wire.CodeHTTPError], the one code that
	// stands for whatever status it came with; 0 otherwise.
	other int
}

// newAPIError returns an error that is sent as {"code": code, "message":
// msg} with code's status.
func newAPIError(code wire.Code, msg string) *apiError {
	return &apiError{code: code, msg: msg}
}

// status is the HTTP status e is sent with.
func (e *apiError) status() int {
	if s := e.code.Status(); s != 0 {
		return s
	}
	if e.other != 0 {
		return e.other
	}
	return http.StatusInternalServerError
}

// internalError wraps an unexpected failure (a storage error, a corrupt
// file) as a 500 whose body says nothing about the cause. Two failures
// are the caller's fault, not the server's, and are not logged as errors:
// a storage key the backends refuse ([storage.ErrInvalidKey]: a name too
// long for the storage) becomes a 400 INVALID_PATH, and a request body
// over the limit of its route (an [*http.MaxBytesError] from
// [http.MaxBytesReader], wherever it is read) a 413 PAYLOAD_TOO_LARGE
// naming the limit.
func internalError(cause error) *apiError {
	if errors.Is(cause, storage.ErrInvalidKey) {
		return &apiError{code: wire.CodeInvalidPath, msg: msgInvalidKey, cause: cause}
	}
	if mbe, ok := errors.AsType[*http.MaxBytesError](cause); ok {
		return &apiError{code: wire.CodePayloadTooLarge, cause: cause,
			msg: fmt.Sprintf("The request body is larger than the %d bytes this route accepts", mbe.Limit)}
	}
	if tle, ok := errors.AsType[*tooLargeError](cause); ok {
		return &apiError{code: wire.CodePayloadTooLarge, cause: cause,
			msg: fmt.Sprintf("The stored document is larger than the %d bytes this server sends", tle.limit)}
	}
	return &apiError{code: wire.CodeInternal, msg: "Internal server error", cause: cause}
}

// Error returns "<code>: <message>[: <cause>]" for logs; the wire body is
// built by handleError.
func (e *apiError) Error() string {
	if e.cause != nil {
		return string(e.code) + ": " + e.msg + ": " + e.cause.Error()
	}
	return string(e.code) + ": " + e.msg
}

// Unwrap returns the logged cause, if any.
func (e *apiError) Unwrap() error { return e.cause }

// authError maps the access errors of [AuthConfig.Authorize] to their wire
// form. It returns nil for a nil err and a 500 for anything unexpected.
func authError(err error) *apiError {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrForbiddenNamespace):
		return newAPIError(wire.CodeForbiddenNamespace, "Namespace not allowed")
	case errors.Is(err, ErrTokenRequired):
		return newAPIError(wire.CodeUnauthorized, "Authentication token is required")
	case errors.Is(err, ErrInvalidToken):
		return newAPIError(wire.CodeInvalidToken, "Provided token is invalid")
	case errors.Is(err, ErrTokenExpired):
		return newAPIError(wire.CodeTokenExpired, "Authentication token has expired")
	}
	return internalError(err)
}

// representationHeaders describe a successful body; an error response
// must not carry them.
var representationHeaders = []string{
	headerETag, echo.HeaderLastModified, echo.HeaderContentEncoding,
	echo.HeaderContentLength, echo.HeaderContentDisposition, "Content-Range", "Accept-Ranges",
}

// handleError is echo's HTTPErrorHandler: it turns every error a route or
// middleware returns into the wire shape, with Cache-Control: no-store.
func (h *Handler) handleError(err error, c echo.Context) {
	var ae *apiError
	var he *echo.HTTPError
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &he):
		ae = fromEchoError(he)
	default:
		ae = internalError(err)
	}
	if ae.status() >= 500 {
		h.log.Error("request failed",
			zap.String("method", c.Request().Method),
			zap.String("route", c.Path()),
			zap.Int("statusCode", ae.status()),
			zap.Error(ae))
	}
	resp := c.Response()
	if resp.Committed {
		return
	}
	if hasBody(c.Request()) {
		// Whatever is left of the body is not wanted: never wait for it
		// (a client trickling it would hold the connection).
		refuseBody(c)
	}
	hdr := resp.Header()
	for _, k := range representationHeaders {
		hdr.Del(k)
	}
	hdr.Set(echo.HeaderCacheControl, "no-store")
	if c.Request().Method == http.MethodHead {
		hdr.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		resp.WriteHeader(ae.status())
		return
	}
	body, _ := json.Marshal(wire.Error{Code: ae.code, Message: ae.msg})
	if werr := c.Blob(ae.status(), echo.MIMEApplicationJSON, body); werr != nil {
		h.log.Debug("writing error response", zap.Error(werr))
	}
}

// fromEchoError maps echo's own errors (no route, wrong method, a body
// too large for a limit middleware) to the wire shape: the generic code
// of their status ([wire.CodeForStatus]).
func fromEchoError(he *echo.HTTPError) *apiError {
	switch he.Code {
	case http.StatusNotFound:
		return newAPIError(wire.CodeNotFound, "Route not found")
	case http.StatusMethodNotAllowed:
		return newAPIError(wire.CodeMethodNotAllowed, "Method not allowed")
	}
	code := wire.CodeForStatus(he.Code)
	msg := http.StatusText(he.Code)
	if m, ok := he.Message.(string); ok && m != "" {
		msg = m
	}
	if he.Code >= 500 {
		msg = "Internal server error"
	}
	return &apiError{code: code, msg: msg, cause: he, other: he.Code}
}
