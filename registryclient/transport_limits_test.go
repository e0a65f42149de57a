package registryclient_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryclient"
)

// TestConnectionRefusedNotRetried: nothing listens at the URL, so retrying
// cannot help; the client fails after one attempt instead of backing off.
func TestConnectionRefusedNotRetried(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	var retries atomic.Int32
	c, err := registryclient.New(url, registryclient.WithRetry(3, time.Minute),
		registryclient.WithRetryNotify(func(int, time.Duration, error) { retries.Add(1) }))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Namespaces(t.Context())
	if !errors.As(err, new(*registryclient.NetworkError)) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("got %v, want a NetworkError saying connection refused", err)
	}
	if n := retries.Load(); n != 0 {
		t.Errorf("got %d retries, want 0", n)
	}
}

// TestIdleTimeout: a body that stops arriving is given up on, and not
// retried.
func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // never sends the body
	}))
	defer srv.Close()
	c, err := registryclient.New(srv.URL, registryclient.WithIdleTimeout(100*time.Millisecond), registryclient.WithRetry(3, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Namespaces(t.Context())
	if !errors.As(err, new(*registryclient.NetworkError)) || !strings.Contains(err.Error(), "the server sent no data for too long") {
		t.Fatalf("got %v, want a NetworkError about a stalled body", err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("got %d calls, want 1 (a stalled server is not retried)", n)
	}
}

// TestDeadline: a server that trickles its body defeats an idle timeout;
// the overall deadline ends it, with an error wrapping ErrDeadline.
func TestDeadline(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(testenv.Trickle(20 * time.Millisecond))
	defer srv.Close()
	c, err := registryclient.New(srv.URL, registryclient.WithDeadline(time.Now().Add(300*time.Millisecond)),
		registryclient.WithIdleTimeout(time.Minute), registryclient.WithTimeout(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Namespaces(t.Context())
	if !errors.Is(err, registryclient.ErrDeadline) {
		t.Fatalf("got %v, want ErrDeadline", err)
	}
	if !strings.Contains(err.Error(), srv.URL+"/namespaces") {
		t.Errorf("got %q, want it to name the URL", err)
	}
}
