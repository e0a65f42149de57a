package registryserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/signing"
)

// SignersSuffix ends the name of a signer file in a signers folder:
// "<namespace without @>.allowed_signers", e.g. "main.allowed_signers"
// for @main.
const SignersSuffix = ".allowed_signers"

// maxSignerFiles bounds the signer files a signers folder may hold.
const maxSignerFiles = 10_000

// Signers are the namespaces that require signed versions, each with the
// keys allowed to sign them: the OpenSSH allowed_signers files of a signers
// folder ([LoadSigners]). An upload to such a namespace must carry at least
// one signature, by a key its file lists for namespace "jig-registry" at
// the time of the upload, over the version's digest index (400
// SIGNATURE_REQUIRED, 403 SIGNATURE_INVALID). A nil *Signers requires
// signatures nowhere. It is immutable once loaded.
type Signers struct {
	dir   string
	files []SignerFile
	byNS  map[string]*signing.AllowedSigners
}

// SignerFile is one signer file of a [Signers].
type SignerFile struct {
	// Namespace is the namespace it gates ("@main") and Path the file.
	Namespace, Path string
	// Signers are its parsed keys.
	Signers *signing.AllowedSigners
}

// LoadSigners reads every "<ns>.allowed_signers" file of dir (see
// [SignersSuffix]); other names, and names starting with "." (a Kubernetes
// ConfigMap's ..data links), are ignored. Each file must be a regular file
// or a symbolic link to one (a FIFO or device is refused rather than read,
// so a reload never blocks) of at most [signing.MaxAllowedSignersSize]
// bytes, named after a valid namespace, and parse with
// [signing.ParseAllowedSigners]; any failure fails the whole load (the
// caller keeps what it had). A file with no key requires signatures that
// nobody can make: the namespace is closed to uploads.
func LoadSigners(dir string) (*Signers, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the signers folder: %w", err)
	}
	s := &Signers{dir: dir, byNS: map[string]*signing.AllowedSigners{}}
	for _, e := range entries {
		name := e.Name()
		base, ok := strings.CutSuffix(name, SignersSuffix)
		if !ok || strings.HasPrefix(name, ".") {
			continue
		}
		if len(s.files) >= maxSignerFiles {
			return nil, fmt.Errorf("signers folder %s holds more than %d signer files", dir, maxSignerFiles)
		}
		path := filepath.Join(dir, name)
		ns := "@" + base
		if !registry.ValidNamespace(ns) {
			return nil, fmt.Errorf("signer file %s: %q is not a namespace; name the file <namespace without @>%s, e.g. main%s for @main", path, ns, SignersSuffix, SignersSuffix)
		}
		data, err := safefile.ReadFile(path, signing.MaxAllowedSignersSize)
		if errors.Is(err, safefile.ErrTooLarge) {
			return nil, fmt.Errorf("signer file %s is larger than %d bytes", path, signing.MaxAllowedSignersSize)
		}
		if err != nil {
			return nil, fmt.Errorf("signer file: %w", err)
		}
		a, err := signing.ParseAllowedSigners(data)
		if err != nil {
			return nil, fmt.Errorf("signer file %s: %w", path, err)
		}
		s.files = append(s.files, SignerFile{Namespace: ns, Path: path, Signers: a})
		s.byNS[ns] = a
	}
	sort.Slice(s.files, func(i, j int) bool { return s.files[i].Namespace < s.files[j].Namespace })
	return s, nil
}

// For returns the allowed signers of namespace, or nil when it does not
// require signed versions.
func (s *Signers) For(namespace string) *signing.AllowedSigners {
	if s == nil {
		return nil
	}
	return s.byNS[namespace]
}

// Files returns the signer files, sorted by namespace.
func (s *Signers) Files() []SignerFile {
	if s == nil {
		return nil
	}
	return append([]SignerFile(nil), s.files...)
}

// Dir returns the folder the signers were loaded from.
func (s *Signers) Dir() string {
	if s == nil {
		return ""
	}
	return s.dir
}
