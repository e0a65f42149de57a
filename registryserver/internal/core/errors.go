package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/storage"
)

// MsgInvalidKey is the message of a path the storage cannot hold.
var MsgInvalidKey = fmt.Sprintf("Invalid path: each part must be at most %d bytes and the whole path at most %d bytes",
	storage.MaxSegmentLength, storage.MaxKeyLength)

// APIError is an error with its HTTP wire form: the body
// {"code": code, "message": msg}, sent with the status the code table of
// package wire gives code ([wire.Code.Status]). Handlers return it;
// [Handler.handleError] is the one place that writes it. msg is sent to the
// client, so it must never contain a token or a namespace the caller may
// not read. cause, when set, is logged (at error level, for 5xx) and never
// sent.
type APIError struct {
	Code  wire.Code
	Msg   string
	Cause error
	// Namespace is the namespace a refused request asked for, recorded
	// in the audit log with a failed token check; never sent.
	Namespace string
	// other is the status of a [wire.CodeHTTPError], the one code that
	// stands for whatever status it came with; 0 otherwise.
	other int
}

// NewAPIError returns an error that is sent as {"code": code, "message":
// msg} with code's status.
func NewAPIError(code wire.Code, msg string) *APIError {
	return &APIError{Code: code, Msg: msg}
}

// Status is the HTTP Status e is sent with.
func (e *APIError) Status() int {
	if s := e.Code.Status(); s != 0 {
		return s
	}
	if e.other != 0 {
		return e.other
	}
	return http.StatusInternalServerError
}

// InternalError wraps an unexpected failure (a storage error, a corrupt
// file) as a 500 whose body says nothing about the cause. Two failures
// are the caller's fault, not the server's, and are not logged as errors:
// a storage key the backends refuse ([storage.ErrInvalidKey]: a name too
// long for the storage) becomes a 400 INVALID_PATH, and a request body
// over the limit of its route (an [*http.MaxBytesError] from
// [http.MaxBytesReader], wherever it is read) a 413 PAYLOAD_TOO_LARGE
// naming the limit.
func InternalError(cause error) *APIError {
	if errors.Is(cause, storage.ErrInvalidKey) {
		return &APIError{Code: wire.CodeInvalidPath, Msg: MsgInvalidKey, Cause: cause}
	}
	if mbe, ok := errors.AsType[*http.MaxBytesError](cause); ok {
		return &APIError{Code: wire.CodePayloadTooLarge, Cause: cause,
			Msg: fmt.Sprintf("The request body is larger than the %d bytes this route accepts", mbe.Limit)}
	}
	if tle, ok := errors.AsType[*TooLargeError](cause); ok {
		return &APIError{Code: wire.CodePayloadTooLarge, Cause: cause,
			Msg: fmt.Sprintf("The stored document is larger than the %d bytes this server sends", tle.Limit)}
	}
	return &APIError{Code: wire.CodeInternal, Msg: "Internal server error", Cause: cause}
}

// Error returns "<code>: <message>[: <cause>]" for logs; the wire body is
// built by handleError.
func (e *APIError) Error() string {
	if e.Cause != nil {
		return string(e.Code) + ": " + e.Msg + ": " + e.Cause.Error()
	}
	return string(e.Code) + ": " + e.Msg
}

// Unwrap returns the logged cause, if any.
func (e *APIError) Unwrap() error { return e.Cause }

// representationHeaders describe a successful body; an error response
// must not carry them.
var representationHeaders = []string{
	headerETag, echo.HeaderLastModified, echo.HeaderContentEncoding,
	echo.HeaderContentLength, echo.HeaderContentDisposition, "Content-Range", "Accept-Ranges",
}

// HandleError is echo's HTTPErrorHandler: it turns every error a route or
// middleware returns into the wire shape, with Cache-Control: no-store.
func (h *Core) HandleError(err error, c echo.Context) {
	var ae *APIError
	var he *echo.HTTPError
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &he):
		ae = fromEchoError(he)
	default:
		ae = InternalError(err)
	}
	if h.Auditor != nil && refusedCredentials(ae.Code) {
		h.AuditRefusal(c, h.CallerOf(c.Request()), ae)
	}
	if ae.Status() >= 500 {
		h.Log.Error("request failed",
			zap.String("method", c.Request().Method),
			zap.String("route", c.Path()),
			zap.Int("statusCode", ae.Status()),
			zap.Error(ae))
	}
	resp := c.Response()
	if resp.Committed {
		return
	}
	if hasBody(c.Request()) {
		// Whatever is left of the body is not wanted: never wait for it
		// (a client trickling it would hold the connection).
		RefuseBody(c)
	}
	hdr := resp.Header()
	for _, k := range representationHeaders {
		hdr.Del(k)
	}
	hdr.Set(echo.HeaderCacheControl, "no-store")
	if c.Request().Method == http.MethodHead {
		hdr.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		resp.WriteHeader(ae.Status())
		return
	}
	body, _ := json.Marshal(wire.Error{Code: ae.Code, Message: ae.Msg})
	if werr := c.Blob(ae.Status(), echo.MIMEApplicationJSON, body); werr != nil {
		h.Log.Debug("writing error response", zap.Error(werr))
	}
}

// fromEchoError maps echo's own errors (no route, wrong method, a body
// too large for a limit middleware) to the wire shape: the generic code
// of their status ([wire.CodeForStatus]).
func fromEchoError(he *echo.HTTPError) *APIError {
	switch he.Code {
	case http.StatusNotFound:
		return NewAPIError(wire.CodeNotFound, "Route not found")
	case http.StatusMethodNotAllowed:
		return NewAPIError(wire.CodeMethodNotAllowed, "Method not allowed")
	}
	code := wire.CodeForStatus(he.Code)
	msg := http.StatusText(he.Code)
	if m, ok := he.Message.(string); ok && m != "" {
		msg = m
	}
	if he.Code >= 500 {
		msg = "Internal server error"
	}
	return &APIError{Code: code, Msg: msg, Cause: he, other: he.Code}
}

// SignatureRefusal returns err as its wire form when it is a refusal of
// signatures by [publish.CheckSignatures] (400 SIGNATURE_REQUIRED or 403
// SIGNATURE_INVALID, with the refusal's message), else err unchanged.
func SignatureRefusal(err error) error {
	if se, ok := errors.AsType[*publish.SignatureError](err); ok {
		return NewAPIError(se.Code(), se.Error())
	}
	return err
}

// StateUnavailable is the answer to a request the state database failed
// (err, logged): 503 STATE_UNAVAILABLE, saying that what (the census,
// the audit log) cannot be used now and that registries still can.
func StateUnavailable(what string, err error) *APIError {
	return &APIError{Code: wire.CodeStateUnavailable, Cause: err,
		Msg: "The " + what + " database is not answering; registries can still be read and installed. Try again later"}
}
