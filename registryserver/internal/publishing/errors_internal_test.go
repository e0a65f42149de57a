package publishing

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/publish"
)

// TestPublishInterruptedStatus: a publish that lost its claim is the
// server's trouble, retried by publishing again: 503 PUBLISH_INTERRUPTED,
// not UPLOAD_FAILED, which is documented (and sent elsewhere) as 400.
func TestPublishInterruptedStatus(t *testing.T) {
	v := publish.Version{Namespace: "@acme", Segments: []string{"features", "ui"}, Version: "1.0.0"}
	ae := publishError(fmt.Errorf("publish: %w", publish.ErrClaimLost), v)
	if ae.Code != wire.CodePublishInterrupted || ae.Status() != http.StatusServiceUnavailable {
		t.Fatalf("claim lost = %d %s, want 503 PUBLISH_INTERRUPTED", ae.Status(), ae.Code)
	}
	if ae := publishError(publish.ErrVersionExists, v); ae.Code != wire.CodeVersionExists || ae.Status() != http.StatusConflict {
		t.Fatalf("version exists = %d %s, want 409 VERSION_EXISTS", ae.Status(), ae.Code)
	}
}
