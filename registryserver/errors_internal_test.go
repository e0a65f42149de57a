package registryserver

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

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
