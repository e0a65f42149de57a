package registryserver

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/publish"
)

// TestPublishInterruptedStatus: a publish that lost its claim is the
// server's trouble, retried by publishing again: 503 PUBLISH_INTERRUPTED,
// not UPLOAD_FAILED, which is documented (and sent elsewhere) as 400.
func TestPublishInterruptedStatus(t *testing.T) {
	v := publish.Version{Namespace: "@acme", Segments: []string{"features", "ui"}, Version: "1.0.0"}
	ae := publishError(fmt.Errorf("publish: %w", publish.ErrClaimLost), v)
	if ae.code != wire.CodePublishInterrupted || ae.status() != http.StatusServiceUnavailable {
		t.Fatalf("claim lost = %d %s, want 503 PUBLISH_INTERRUPTED", ae.status(), ae.code)
	}
	if ae := publishError(publish.ErrVersionExists, v); ae.code != wire.CodeVersionExists || ae.status() != http.StatusConflict {
		t.Fatalf("version exists = %d %s, want 409 VERSION_EXISTS", ae.status(), ae.code)
	}
}

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
		if ae.status() != tc.status || ae.code != tc.code {
			t.Errorf("echo %d = %d %s, want %d %s", tc.status, ae.status(), ae.code, tc.status, tc.code)
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
		ae := internalError(err)
		if ae.status() != http.StatusRequestEntityTooLarge || ae.code != wire.CodePayloadTooLarge {
			t.Errorf("%v = %d %s, want 413 PAYLOAD_TOO_LARGE", err, ae.status(), ae.code)
		}
		if !strings.Contains(ae.msg, "8388608 bytes") {
			t.Errorf("%v: message %q does not name the limit", err, ae.msg)
		}
	}
	// What routes return unmapped goes through the same place.
	h := &Handler{log: zap.NewNop()}
	e := echo.New()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/census/@pub", strings.NewReader("{}"))
	rec := httptest.NewRecorder()
	h.handleError(fmt.Errorf("census: %w", &http.MaxBytesError{Limit: 256 << 10}), e.NewContext(req, rec))
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), `"code":"PAYLOAD_TOO_LARGE"`) {
		t.Errorf("handleError = %d %s, want 413 PAYLOAD_TOO_LARGE", rec.Code, rec.Body)
	}
}
