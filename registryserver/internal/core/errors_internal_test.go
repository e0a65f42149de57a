package core

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/jigkit/jig/registry/wire"
)

// TestEchoErrorStatus: echo's own errors keep their status and get the
// generic code of it.
func TestEchoErrorStatus(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   wire.Code
	}{
		{http.StatusRequestEntityTooLarge, wire.CodePayloadTooLarge},
		{http.StatusBadRequest, wire.CodeBadRequest},
		{http.StatusTeapot, wire.CodeHTTPError},
		{http.StatusBadGateway, wire.CodeHTTPError},
		{http.StatusInternalServerError, wire.CodeInternal},
	} {
		ae := fromEchoError(echo.NewHTTPError(tc.status))
		if ae.Status() != tc.status || ae.Code != tc.code {
			t.Errorf("echo %d = %d %s, want %d %s", tc.status, ae.Status(), ae.Code, tc.status, tc.code)
		}
	}
}

// TestBodyTooLargeStatus: a request body over its route's limit is the
// caller's fault wherever it is read: 413 PAYLOAD_TOO_LARGE naming the
// limit, never a 500.
func TestBodyTooLargeStatus(t *testing.T) {
	for _, err := range []error{
		&http.MaxBytesError{Limit: 8 << 20},
		fmt.Errorf("reading the signature field: %w", &http.MaxBytesError{Limit: 8 << 20}),
		fmt.Errorf("multipart: NextPart: %w", fmt.Errorf("read: %w", &http.MaxBytesError{Limit: 8 << 20})),
	} {
		ae := InternalError(err)
		if ae.Status() != http.StatusRequestEntityTooLarge || ae.Code != wire.CodePayloadTooLarge {
			t.Errorf("%v = %d %s, want 413 PAYLOAD_TOO_LARGE", err, ae.Status(), ae.Code)
		}
		if !strings.Contains(ae.Msg, "8388608 bytes") {
			t.Errorf("%v: message %q does not name the limit", err, ae.Msg)
		}
	}
	// What routes return unmapped goes through the same place.
	h := &Core{Log: zap.NewNop()}
	e := echo.New()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/census/@pub", strings.NewReader("{}"))
	rec := httptest.NewRecorder()
	h.HandleError(fmt.Errorf("census: %w", &http.MaxBytesError{Limit: 256 << 10}), e.NewContext(req, rec))
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), `"code":"PAYLOAD_TOO_LARGE"`) {
		t.Errorf("handleError = %d %s, want 413 PAYLOAD_TOO_LARGE", rec.Code, rec.Body)
	}
}
