//go:build unix

package servercli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// selfSigned returns a PEM certificate and key for 127.0.0.1 named cn.
func selfSigned(t *testing.T, cn string) (certPEM, keyPEM []byte, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ = x509.ParseCertificate(der)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), cert
}

// replace writes data to path through a rename, as certificate tools do.
func replace(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// servedName connects to addr on a new connection and returns the common
// name of the certificate it presents and the protocol of a GET /health.
func servedName(t *testing.T, addr string, roots *x509.CertPool) (cn, proto string) {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("https://" + addr + "/health")
	if err != nil {
		t.Fatalf("GET https://%s/health: %v", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /health: %s", resp.Status)
	}
	return resp.TLS.PeerCertificates[0].Subject.CommonName, resp.Proto
}

// tokenStatus is the status of GET /namespaces/@team/registries over
// HTTPS with token.
func tokenStatus(t *testing.T, addr string, roots *x509.CertPool, token string) int {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+addr+"/namespaces/@team/registries", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET https://%s/namespaces/@team/registries: %v", addr, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// waitServed polls until addr presents the certificate named want.
func waitServed(t *testing.T, addr string, roots *x509.CertPool, want string) {
	t.Helper()
	for {
		cn, _ := servedName(t, addr, roots)
		if cn == want {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("the server still presents %q, want %q", cn, want)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestTLS serves HTTPS with HTTP/2 from a certificate file and reloads it
// when the files change and on SIGHUP; a broken pair keeps the old one.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	roots := x509.NewCertPool()
	install := func(cn string) {
		c, k, cert := selfSigned(t, cn)
		roots.AddCert(cert)
		replace(t, keyFile, k)
		replace(t, certFile, c)
	}
	install("first")
	authFile := filepath.Join(dir, "auth.json")
	replace(t, authFile, []byte(`{"@main": [], "@team": [{"token": "leaked"}, {"token": "kept"}]}`))
	base, stop, out := start(t, "--storage-root", filepath.Join(dir, "data"),
		"--tls-cert-file", certFile, "--tls-key-file", keyFile, "--tls-reload-interval", "20ms",
		"--auth-config-path", authFile, "--config-reload-interval", "0")
	if !strings.Contains(out.String(), "Server listening at https://") {
		t.Errorf("startup log %q does not announce https", out.String())
	}
	addr := strings.TrimPrefix(base, "http://")

	cn, proto := servedName(t, addr, roots)
	if cn != "first" || proto != "HTTP/2.0" {
		t.Fatalf("got certificate %q over %s, want first over HTTP/2.0", cn, proto)
	}

	// A renewal on disk is picked up by the file check.
	install("second")
	waitServed(t, addr, roots, "second")

	// SIGHUP reloads at once. The test listens too, so a signal that
	// arrived with no handler could not stop the test binary.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	// One SIGHUP reloads both the certificate and auth.json.
	if got := tokenStatus(t, addr, roots, "leaked"); got != http.StatusOK {
		t.Fatalf("before the revocation: got %d, want 200", got)
	}
	install("third")
	replace(t, authFile, []byte(`{"@main": [], "@team": [{"token": "kept"}]}`))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitServed(t, addr, roots, "third")
	for tokenStatus(t, addr, roots, "leaked") != http.StatusUnauthorized {
		select {
		case <-t.Context().Done():
			t.Fatal("the revoked token still works after SIGHUP")
		case <-time.After(20 * time.Millisecond):
		}
	}

	// A broken pair is refused; the last good certificate stays.
	failures := strings.Count(out.String(), "TLS certificate reload failed")
	replace(t, certFile, []byte("not a certificate"))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for strings.Count(out.String(), "TLS certificate reload failed") == failures {
		select {
		case <-t.Context().Done():
			t.Fatalf("no reload failure logged; log %s", out)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if cn, _ := servedName(t, addr, roots); cn != "third" {
		t.Errorf("after a broken renewal: got certificate %q, want third", cn)
	}
	if code := stop(); code != ExitOK {
		t.Errorf("exit code %d, want 0", code)
	}
}

func TestTLSStartupErrors(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	c, _, _ := selfSigned(t, "a")
	_, k, _ := selfSigned(t, "b")
	writeFile(t, certFile, string(c))
	writeFile(t, keyFile, string(k))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"cert without key", []string{"--tls-cert-file", certFile}, "go together"},
		{"missing file", []string{"--tls-cert-file", filepath.Join(dir, "nope.crt"), "--tls-key-file", keyFile}, "nope.crt"},
		{"key of another certificate", []string{"--tls-cert-file", certFile, "--tls-key-file", keyFile}, "key belongs to the certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut strings.Builder
			args := append([]string{"--host", "127.0.0.1", "--port", "0", "--storage-root", filepath.Join(dir, "data")}, tt.args...)
			if code := Main(t.Context(), args, &out, &errOut); code != ExitError {
				t.Fatalf("exit %d, want %d", code, ExitError)
			}
			if all := out.String() + errOut.String(); !strings.Contains(all, tt.want) {
				t.Errorf("output %q does not contain %q", all, tt.want)
			}
		})
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "data")); len(entries) != 0 {
		t.Errorf("a server that did not start seeded the storage: %d entries", len(entries))
	}
}
