package pkgarchive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
)

// Default limits, as DESIGN.md section 3.3 sets them for uploads. They
// are jig-server's defaults and what jig publish checks before uploading.
const (
	DefaultMaxUpload       = 100 << 20 // 100 MiB of archive
	DefaultMaxUnpacked     = 100 << 20 // 100 MiB of file content
	DefaultMaxEntries      = 10000
	DefaultMaxPathLen      = 512
	DefaultMaxManifestSize = 1 << 20 // 1 MiB
	// MaxPresetSize is the largest preset.json published (POST /presets).
	MaxPresetSize = 1 << 20
)

var (
	// ErrInvalidArchive is wrapped by every error about an archive that
	// cannot be read safely: not gzip, not tar, corrupt, over a limit, or
	// with an entry name that could escape the package root.
	ErrInvalidArchive = errors.New("invalid archive")
	// ErrLimit is wrapped (together with ErrInvalidArchive) when a limit
	// is crossed.
	ErrLimit = errors.New("archive limit exceeded")
)

// Limits bound what a reader accepts. A zero field means its default.
type Limits struct {
	// MaxUpload is the largest archive in bytes, as uploaded
	// (DefaultMaxUpload). The readers do not use it: the archive is
	// measured while it is received.
	MaxUpload int64
	// MaxUnpacked is the most bytes of file content in total
	// (DefaultMaxUnpacked).
	MaxUnpacked int64
	// MaxEntries is the most tar entries of any kind (DefaultMaxEntries).
	MaxEntries int
	// MaxPathLen is the longest entry name in bytes (DefaultMaxPathLen).
	MaxPathLen int
	// MaxManifestSize is the largest registry.json (DefaultMaxManifestSize).
	MaxManifestSize int64
	// MaxStream is the most decompressed bytes read in total, headers,
	// padding and trailing data included. The default is MaxUnpacked plus
	// 16 MiB plus 1 KiB per allowed entry.
	MaxStream int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxUpload <= 0 {
		l.MaxUpload = DefaultMaxUpload
	}
	if l.MaxUnpacked <= 0 {
		l.MaxUnpacked = DefaultMaxUnpacked
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxPathLen <= 0 {
		l.MaxPathLen = DefaultMaxPathLen
	}
	if l.MaxManifestSize <= 0 {
		l.MaxManifestSize = DefaultMaxManifestSize
	}
	if l.MaxStream <= 0 {
		l.MaxStream = l.MaxUnpacked + streamSlack + int64(l.MaxEntries)*1024
	}
	return l
}

// streamSlack is how many decompressed bytes beyond MaxUnpacked the tar
// stream may hold for headers, padding and extended (PAX, GNU long name)
// records.
const streamSlack = 16 << 20

// Error is the error of an archive that is refused. It wraps
// [ErrInvalidArchive] (and [ErrLimit] for limits).
type Error struct {
	// Entry is the entry name involved, or "".
	Entry string
	// Reason says what is wrong, in words meant for the uploader.
	Reason string
	limit  bool
	cause  error
}

func (e *Error) Error() string {
	s := e.Reason
	if e.Entry != "" {
		s = fmt.Sprintf("%s: %q", e.Reason, e.Entry)
	}
	if e.cause != nil {
		s += ": " + e.cause.Error()
	}
	return s
}

// Unwrap returns ErrInvalidArchive, ErrLimit when a limit was crossed, and
// the underlying read error if any.
func (e *Error) Unwrap() []error {
	errs := []error{ErrInvalidArchive}
	if e.limit {
		errs = append(errs, ErrLimit)
	}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}

// Unsafe is an entry that is not a regular file or directory.
type Unsafe struct {
	Name string // normalised entry name
	Kind string // "symbolic link", "hard link", "character device", ...
}

// Index describes a valid archive.
type Index struct {
	// Manifest is the content of registry.json at the root, or nil when
	// there is none (or it is not a regular file; see Unsafe).
	Manifest []byte
	// Files maps the normalised name of every regular file (registry.json
	// included) to its size.
	Files map[string]int64
	// Digests maps the same names to the sha-256 of their content,
	// "sha256:<hex>" ([registry.Digest]); [Index.DigestIndex] builds the
	// version's digest index from them. Only [Scan] fills it.
	Digests map[string]string
	// Unsafe lists entries that are neither regular files nor
	// directories, in archive order.
	Unsafe []Unsafe
	// Unpacked is the total size of the regular files.
	Unpacked int64
}

// Names returns the regular file names, sorted.
func (ix *Index) Names() []string {
	return slices.Sorted(maps.Keys(ix.Files))
}

// Scan reads a whole gzip-compressed tar archive from r, checks it against
// lim, and returns its index. File contents other than registry.json are
// read, hashed ([Index.Digests]) and discarded. The error is an [*Error] for a refused archive, or
// the reader's own error.
func Scan(r io.Reader, lim Limits) (*Index, error) {
	ix, _, err := scan(r, lim, false)
	return ix, err
}

// scan is [Scan]; with keep, it also returns the content of every regular
// file other than registry.json (whose content is the index's Manifest),
// by name.
func scan(r io.Reader, lim Limits, keep bool) (*Index, map[string][]byte, error) {
	lim = lim.withDefaults()
	ix := &Index{Files: map[string]int64{}, Digests: map[string]string{}}
	var files map[string][]byte
	if keep {
		files = map[string][]byte{}
	}
	h := sha256.New()
	buf := make([]byte, 32<<10) // one copy buffer for every file, not one each
	err := read(r, lim, ix, func(name string, size int64, body io.Reader) error {
		h.Reset()
		if name != layout.ManifestFile {
			var dst io.Writer = h
			var kept *bytes.Buffer
			if keep {
				// Read as without keep, through the same copy, so that a
				// broken archive fails at the same point with the same
				// error. size is within MaxUnpacked: read checked it.
				kept = bytes.NewBuffer(make([]byte, 0, size))
				dst = io.MultiWriter(h, kept)
			}
			if _, err := io.CopyBuffer(dst, body, buf); err != nil {
				return err
			}
			ix.Digests[name] = registry.DigestPrefix + hex.EncodeToString(h.Sum(nil))
			if keep {
				files[name] = kept.Bytes()
			}
			return nil
		}
		if size > lim.MaxManifestSize {
			return &Error{Entry: name, Reason: fmt.Sprintf("registry.json is larger than %d bytes", lim.MaxManifestSize), limit: true}
		}
		b, err := io.ReadAll(body)
		if err != nil {
			return err
		}
		ix.Manifest = b
		ix.Digests[name] = registry.Digest(b)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return ix, files, nil
}

// Walk reads the archive again and calls fn for every regular file for
// which want returns true, in archive order, with a reader of exactly size
// bytes. fn must not keep body. The same limits and checks as [Scan] apply,
// so Walk is safe on its own too. An error from fn stops the walk and is
// returned as is.
func Walk(r io.Reader, lim Limits, want func(name string) bool, fn func(name string, size int64, body io.Reader) error) error {
	lim = lim.withDefaults()
	ix := &Index{Files: map[string]int64{}}
	return read(r, lim, ix, func(name string, size int64, body io.Reader) error {
		if !want(name) {
			return nil
		}
		return fn(name, size, body)
	})
}

// countingReader fails once more than max bytes have been read.
type countingReader struct {
	r   io.Reader
	n   int64
	max int64
}

var errStreamTooLarge = errors.New("decompressed stream too large")

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n >= c.max {
		// Allow a read that reports EOF, refuse any more data.
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			return 0, errStreamTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > c.max-c.n {
		p = p[:c.max-c.n]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func read(r io.Reader, lim Limits, ix *Index, onFile func(name string, size int64, body io.Reader) error) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return &Error{Reason: "not a gzip stream", cause: err}
	}
	defer zr.Close()
	cr := &countingReader{r: zr, max: lim.MaxStream}
	tr := tar.NewReader(cr)
	dirs := map[string]bool{}
	entries := 0
	wrap := func(err error, entry string) error {
		if errors.Is(err, errStreamTooLarge) {
			return &Error{Entry: entry, Reason: fmt.Sprintf("archive expands to more than %d bytes (gzip bomb?)", lim.MaxStream), limit: true}
		}
		var ae *Error
		if errors.As(err, &ae) {
			return err
		}
		return &Error{Entry: entry, Reason: "corrupt tar or gzip data", cause: err}
	}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return wrap(err, "")
		}
		entries++
		if entries > lim.MaxEntries {
			return &Error{Reason: fmt.Sprintf("archive has more than %d entries", lim.MaxEntries), limit: true}
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			continue // pax global header (git archive writes one); metadata only
		}
		if len(hdr.Name) > lim.MaxPathLen {
			return &Error{Entry: hdr.Name[:min(len(hdr.Name), 64)] + "...", Reason: fmt.Sprintf("entry name is longer than %d bytes", lim.MaxPathLen), limit: true}
		}
		name, err := cleanName(hdr.Name, hdr.Typeflag == tar.TypeDir)
		if err != nil {
			return err
		}
		if name == "" {
			continue // the root directory itself ("./")
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if _, clash := ix.Files[name]; clash {
				return &Error{Entry: name, Reason: "entry is both a file and a directory"}
			}
			if err := addParents(name+"/", ix, dirs); err != nil {
				return err
			}
			dirs[name] = true
			continue
		case tar.TypeReg, tar.TypeRegA: //nolint:staticcheck // TypeRegA is what old tars write
		default:
			ix.Unsafe = append(ix.Unsafe, Unsafe{Name: name, Kind: kindName(hdr.Typeflag)})
			continue
		}
		if hdr.Size < 0 {
			return &Error{Entry: name, Reason: "entry has a negative size"}
		}
		if _, dup := ix.Files[name]; dup || dirs[name] {
			return &Error{Entry: name, Reason: "entry appears more than once"}
		}
		if err := addParents(name, ix, dirs); err != nil {
			return err
		}
		if hdr.Size > lim.MaxUnpacked-ix.Unpacked {
			return &Error{Entry: name, Reason: fmt.Sprintf("unpacked content exceeds the limit of %d bytes", lim.MaxUnpacked), limit: true}
		}
		ix.Unpacked += hdr.Size
		ix.Files[name] = hdr.Size
		body := &trackingReader{r: io.LimitReader(tr, hdr.Size)}
		if err := onFile(name, hdr.Size, body); err != nil {
			if body.err != nil {
				return wrap(body.err, name) // the archive broke under fn
			}
			return err
		}
		// Consume what onFile left, still counted by cr.
		if _, err := io.Copy(io.Discard, body); err != nil {
			return wrap(err, name)
		}
	}
	// Read the rest of the gzip stream so its checksum is verified.
	if _, err := io.Copy(io.Discard, cr); err != nil {
		return wrap(err, "")
	}
	return nil
}

// trackingReader remembers the first read error other than io.EOF.
type trackingReader struct {
	r   io.Reader
	err error
}

func (t *trackingReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF && t.err == nil {
		t.err = err
	}
	return n, err
}

// addParents records the parent directories of name (a file, or a
// directory with a trailing "/") and refuses them when a file has the same
// name.
func addParents(name string, ix *Index, dirs map[string]bool) error {
	for i := 0; i < len(name); i++ {
		if name[i] != '/' {
			continue
		}
		p := name[:i]
		if _, clash := ix.Files[p]; clash {
			return &Error{Entry: p, Reason: "entry is both a file and a directory"}
		}
		dirs[p] = true
	}
	return nil
}

// cleanName normalises an entry name: one leading "./" is dropped, and a
// trailing "/" on directories. It refuses names that could leave the root.
// It returns "" for the root directory.
func cleanName(raw string, dir bool) (string, error) {
	bad := func(reason string) (string, error) {
		return "", &Error{Entry: raw, Reason: reason}
	}
	n := raw
	switch {
	case strings.ContainsRune(n, 0):
		return bad("entry name contains a NUL byte")
	case strings.Contains(n, `\`):
		return bad(`entry name contains a backslash`)
	case strings.HasPrefix(n, "/"):
		return bad("entry has an absolute path")
	case len(n) >= 2 && n[1] == ':':
		return bad("entry has a drive-letter path")
	}
	n = strings.TrimPrefix(n, "./")
	if dir || strings.HasSuffix(n, "/") {
		n = strings.TrimSuffix(n, "/")
	}
	if n == "" || n == "." {
		if dir {
			return "", nil
		}
		return bad("entry has an empty name")
	}
	for _, seg := range strings.Split(n, "/") {
		switch seg {
		case "..":
			return bad("entry path climbs out of the package (..)")
		case "", ".":
			return bad("entry path has an empty or . segment")
		}
	}
	return n, nil
}

func kindName(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "symbolic link"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "FIFO"
	case tar.TypeCont:
		return "contiguous file"
	case tar.TypeGNUSparse:
		return "sparse file"
	}
	return fmt.Sprintf("special entry (type %q)", t)
}
