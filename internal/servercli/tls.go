package servercli

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// certReloader serves the certificate of a key pair on disk and replaces
// it when the files change (checked every interval) or on SIGHUP. A pair
// that does not load (a half-written renewal, a key that does not match)
// is logged and the previous certificate stays in use.
type certReloader struct {
	certFile, keyFile string
	log               *zap.Logger

	cert atomic.Pointer[tls.Certificate]

	mu   sync.Mutex // serialises reloads
	seen [2]fileStamp
}

// fileStamp identifies a version of a file without reading it.
type fileStamp struct {
	size    int64
	modTime time.Time
}

func stampOf(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{size: fi.Size(), modTime: fi.ModTime()}, nil
}

// newCertReloader loads the pair once; an error here stops the server.
func newCertReloader(certFile, keyFile string, log *zap.Logger) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile, log: log}
	if err := r.load(); err != nil {
		return nil, err
	}
	return r, nil
}

// load reads and checks the pair and makes it the one served.
func (r *certReloader) load() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	cs, err1 := stampOf(r.certFile)
	ks, err2 := stampOf(r.keyFile)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("TLS certificate: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("TLS certificate %s with key %s: %w; check that both are PEM files and that the key belongs to the certificate",
			r.certFile, r.keyFile, err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return fmt.Errorf("TLS certificate %s: %w", r.certFile, err)
	}
	cert.Leaf = leaf
	if old := r.cert.Load(); old != nil && bytes.Equal(old.Certificate[0], cert.Certificate[0]) {
		r.seen = [2]fileStamp{cs, ks}
		return nil
	}
	r.cert.Store(&cert)
	r.seen = [2]fileStamp{cs, ks}
	r.log.Info("TLS certificate loaded", zap.String("cert", r.certFile), zap.Strings("names", leaf.DNSNames),
		zap.Time("notAfter", leaf.NotAfter))
	return nil
}

// changed reports whether either file differs from what was loaded.
func (r *certReloader) changed() bool {
	cs, err1 := stampOf(r.certFile)
	ks, err2 := stampOf(r.keyFile)
	if err1 != nil || err2 != nil {
		return false // being replaced; look again next time
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen != [2]fileStamp{cs, ks}
}

// getCertificate implements tls.Config.GetCertificate.
func (r *certReloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return r.cert.Load(), nil
}

func (r *certReloader) reload(why string) {
	if err := r.load(); err != nil {
		r.log.Error("TLS certificate reload failed; still serving the previous certificate", zap.String("trigger", why), zap.Error(err))
	}
}

// tlsConfig is the server's TLS configuration: TLS 1.2 or later, the
// reloaded certificate, HTTP/2 and HTTP/1.1 offered by ALPN.
func (r *certReloader) tlsConfig() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: r.getCertificate,
		NextProtos:     []string{"h2", "http/1.1"},
	}
}
