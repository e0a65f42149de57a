package testenv

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// TCPProxy forwards TCP connections from a loopback port to a target until
// stopped, so a test can make a shared service (Redis, say) unreachable for
// the code under test without stopping the service itself.
type TCPProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
	once  sync.Once

	accepted atomic.Int64
}

// StartTCPProxy listens on a free loopback port and forwards every
// connection to target. It is stopped at the end of the test at the latest.
func StartTCPProxy(t testing.TB, target string) *TCPProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &TCPProxy{ln: ln}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.accepted.Add(1)
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			p.wg.Go(func() { _, _ = io.Copy(up, c); _ = up.Close() })
			p.wg.Go(func() { _, _ = io.Copy(c, up); _ = c.Close() })
		}
	})
	t.Cleanup(p.Stop)
	return p
}

// Accepted is the number of connections the proxy accepted so far.
func (p *TCPProxy) Accepted() int64 { return p.accepted.Load() }

// Addr is the proxy's listening address, host:port.
func (p *TCPProxy) Addr() string { return p.ln.Addr().String() }

// Stop closes the listener and every forwarded connection, so the target
// becomes unreachable through the proxy. It is safe to call more than once.
func (p *TCPProxy) Stop() {
	p.once.Do(func() {
		_ = p.ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.conns = nil
		p.mu.Unlock()
		p.wg.Wait()
	})
}
