package servercli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registryserver"
)

// signersReloader reloads SIGNERS_DIR's signer files into a running
// handler on SIGHUP and when they change. A folder that does not load (a
// bad file, a FIFO, a file too large) is logged and the signers in force
// stay.
type signersReloader struct {
	dir string
	h   *registryserver.Handler
	log *zap.Logger

	mu   sync.Mutex // serialises reloads
	seen string
}

// newSignersReloader notes the folder's stamp; call it before the handler
// first loads the folder, and set h once the handler is built.
func newSignersReloader(dir string, log *zap.Logger) *signersReloader {
	r := &signersReloader{dir: dir, log: log}
	r.seen = r.stamp()
	return r
}

// stamp sums up the names, sizes and times of the signer files (following
// symbolic links, as a Kubernetes ConfigMap's files are).
func (r *signersReloader) stamp() string {
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), registryserver.SignersSuffix) {
			continue
		}
		st, _ := stampOf(filepath.Join(r.dir, e.Name()))
		fmt.Fprintf(&b, "%s\x00%d\x00%d\n", e.Name(), st.size, st.modTime.UnixNano())
	}
	return b.String()
}

func (r *signersReloader) changed() bool {
	st := r.stamp()
	r.mu.Lock()
	defer r.mu.Unlock()
	return st != r.seen
}

func (r *signersReloader) reload(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = r.stamp()
	s, err := registryserver.LoadSigners(r.dir)
	if err != nil {
		r.log.Error("Reloading the signer files failed; still using the previous ones", zap.String("trigger", why), zap.Error(err))
		return
	}
	r.h.SetSigners(s)
	r.log.Info("Reloaded the signer files", zap.String("trigger", why), zap.String("dir", r.dir), zap.Int("namespaces", len(s.Files())))
}

// signerFileReport is one signer file as "jig-server auth check" shows it.
type signerFileReport struct {
	Namespace string            `json:"namespace"`
	File      string            `json:"file"`
	Keys      []signerKeyReport `json:"keys"`
}

// signerKeyReport is one key of a signer file.
type signerKeyReport struct {
	Line        int    `json:"line"`
	Principals  string `json:"principals"`
	Fingerprint string `json:"fingerprint"`
	Key         string `json:"key"`
	Namespaces  string `json:"namespaces,omitempty"`
	ValidAfter  string `json:"validAfter,omitempty"`
	ValidBefore string `json:"validBefore,omitempty"`
	// Usable is false for a key that cannot sign a jig version now (its
	// namespaces exclude jig-registry, or it is out of its validity).
	Usable bool `json:"usable"`
}

// describeSigners lists the keys of each signer file and the problems an
// operator should know: a file with no usable key closes its namespace to
// every upload, and a file named after a namespace the auth file does not
// declare (declared reports whether it does) requires nothing at all.
func describeSigners(s *registryserver.Signers, now time.Time, declared func(ns string) bool) ([]signerFileReport, []finding) {
	var out []signerFileReport
	var problems []finding
	for _, f := range s.Files() {
		r := signerFileReport{Namespace: f.Namespace, File: f.Path, Keys: []signerKeyReport{}}
		if !declared(f.Namespace) {
			problems = append(problems, warningf("%s: %s is not a namespace of the auth file, so this file requires signatures nowhere (a misspelt name?); name it <namespace without @>%s", f.Path, f.Namespace, registryserver.SignersSuffix))
		}
		usable := 0
		for _, e := range f.Signers.Entries() {
			k := signerKeyReport{Line: e.Line, Principals: e.Principals, Fingerprint: e.Fingerprint, Key: signing.FormatPublicKey(e.Key), Namespaces: e.Namespaces}
			if !e.ValidAfter.IsZero() {
				k.ValidAfter = e.ValidAfter.UTC().Format(time.RFC3339)
			}
			if !e.ValidBefore.IsZero() {
				k.ValidBefore = e.ValidBefore.UTC().Format(time.RFC3339)
			}
			why, ok := e.Allows(now)
			if k.Usable = ok; ok {
				usable++
			} else {
				problems = append(problems, warningf("%s: key %s cannot sign now: %s", f.Path, e.Fingerprint, why))
			}
			r.Keys = append(r.Keys, k)
		}
		if usable == 0 {
			problems = append(problems, warningf("%s: no key can sign now, so every upload to %s is refused", f.Path, f.Namespace))
		}
		out = append(out, r)
	}
	return out, problems
}

// printSigners prints the signer files for people.
func printSigners(w io.Writer, dir string, files []signerFileReport) {
	if dir == "" {
		return
	}
	if len(files) == 0 {
		fmt.Fprintf(w, "signers %s: no signer files (no namespace requires signed versions)\n", dir)
		return
	}
	for _, f := range files {
		fmt.Fprintf(w, "%s  signed versions required: %s in %s\n", f.Namespace, english.Count(len(f.Keys), "key", "keys"), f.File)
		for _, k := range f.Keys {
			line := fmt.Sprintf("  %s  %s", k.Fingerprint, k.Principals)
			if k.Namespaces != "" {
				line += fmt.Sprintf("  namespaces %q", k.Namespaces)
			}
			if k.ValidAfter != "" {
				line += "  valid after " + k.ValidAfter
			}
			if k.ValidBefore != "" {
				line += "  valid before " + k.ValidBefore
			}
			if !k.Usable {
				line += "  (cannot sign now)"
			}
			fmt.Fprintln(w, line)
		}
	}
}
