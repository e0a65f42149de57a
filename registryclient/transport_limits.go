package registryclient

import (
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
)

// errIdle ends a request whose body stopped making progress.
var errIdle = errors.New("the server sent no data for too long")

// retryable reports whether another attempt after the transport error err
// may help. A refused connection (nothing listens there) and an unknown
// host fail the same way at once on retry, and a timeout or stalled body
// would only spend the same time again: those are not retried, so a
// command fails fast instead of waiting out the backoff.
func retryable(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, errIdle) {
		return false
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return true
}

// idleReader cancels a request when no byte of its body arrives for d.
type idleReader struct {
	r      io.Reader
	d      time.Duration
	t      *time.Timer
	mu     sync.Mutex
	closed bool
}

func newIdleReader(r io.Reader, d time.Duration, cancel func(error)) *idleReader {
	ir := &idleReader{r: r, d: d}
	ir.t = time.AfterFunc(d, func() { cancel(errIdle) })
	return ir
}

func (ir *idleReader) Read(p []byte) (int, error) {
	n, err := ir.r.Read(p)
	if n > 0 {
		ir.mu.Lock()
		if !ir.closed {
			ir.t.Reset(ir.d)
		}
		ir.mu.Unlock()
	}
	return n, err
}

func (ir *idleReader) stop() {
	ir.mu.Lock()
	ir.closed = true
	ir.t.Stop()
	ir.mu.Unlock()
}
