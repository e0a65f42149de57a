// Package cache is jig's content-addressed cache of immutable registry
// content: versioned manifests, digest indexes and files, stored by their
// sha-256 under <dir>/sha256/<hex>, plus refs from a versioned URL to a
// digest under <dir>/refs/. Mutable documents (latest manifests, version
// lists, listings) are never stored; a preset is referenced by its
// version.
//
// Every write goes to a temporary file that is renamed into place, so
// several jig processes can share one cache without locks: readers see a
// whole entry or none, and two writers of one entry write the same bytes.
// Every read re-hashes the blob; a corrupt or vanished entry is a miss
// (and is removed), so the caller fetches it again. Entries are opened
// without following symbolic links and without blocking, anything but a
// regular file is a miss, and no read goes past an entry's size.
//
// The cache is trusted only when it is private: [Open] refuses a directory
// that belongs to another user or that others may write to. [Cache.Trim] keeps the
// cache under its size cap by removing the least recently used blobs (a
// read touches a blob's modification time).
//
//	c, err := cache.Open(cache.DefaultDir(os.Getenv), cache.WithMaxBytes(500<<20))
//	d, err := c.Put(data)        // "sha256:<hex>"
//	b, ok := c.Get(d)            // verified bytes
//	err = c.SetRef("…/1.0.0", d) // a versioned URL names d
package cache

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
)

// DefaultMaxBytes is the default size cap of a cache: 500 MiB.
const DefaultMaxBytes = 500 << 20

// maxBlob bounds one entry; registry files are capped lower by the client.
const maxBlob = 256 << 20

// maxRef bounds a ref file: one digest and a newline.
const maxRef = 1 << 10

// staleTemp is the age after which a temporary file is debris of a killed
// process.
const staleTemp = time.Hour

// Cache is a content-addressed cache in one directory. It is safe for
// concurrent use by goroutines and by processes sharing the directory.
type Cache struct {
	dir     string
	max     int64
	written atomic.Int64
	now     func() time.Time
	// signedMu serializes this process's edits of the signed-versions
	// memory (signed.go), so they do not poll for each other's file
	// lock.
	signedMu sync.Mutex
	// pending are the records waiting for signedMu (RecordSigned).
	pendMu  sync.Mutex
	pending []*signedRecord
	// signedMemo and logsMemo are the last signed-versions and
	// transparency-log memories read (readSignedMemo, readLogsMemo).
	signedMemo fileMemo[*signedDoc]
	logsMemo   fileMemo[*logsDoc]
}

// Option configures [Open].
type Option func(*Cache) error

// WithMaxBytes sets the size cap [Cache.Trim] enforces. The default is
// [DefaultMaxBytes].
func WithMaxBytes(n int64) Option {
	return func(c *Cache) error {
		if n <= 0 {
			return fmt.Errorf("the cache size cap %d must be positive", n)
		}
		c.max = n
		return nil
	}
}

// DefaultDir returns the cache directory: $JIG_CACHE_DIR when set, else
// "jig" under the user cache directory as [os.UserCacheDir] finds it
// ($XDG_CACHE_HOME or ~/.cache on Unix, ~/Library/Caches on macOS,
// %LocalAppData% on Windows), read through getenv (usually [os.Getenv]) so
// callers can substitute the environment. It returns "" when none is known.
func DefaultDir(getenv func(string) string) string {
	if d := getenv("JIG_CACHE_DIR"); d != "" {
		return d
	}
	var base string
	switch runtime.GOOS {
	case "windows":
		base = getenv("LocalAppData")
	case "darwin", "ios":
		if h := getenv("HOME"); h != "" {
			base = filepath.Join(h, "Library", "Caches")
		}
	case "plan9":
		if h := getenv("home"); h != "" {
			base = filepath.Join(h, "lib", "cache")
		}
	default:
		base = getenv("XDG_CACHE_HOME")
		if base == "" || !filepath.IsAbs(base) {
			base = ""
			if h := getenv("HOME"); h != "" {
				base = filepath.Join(h, ".cache")
			}
		}
	}
	if base == "" || !filepath.IsAbs(base) {
		return ""
	}
	return filepath.Join(base, "jig")
}

// Open opens (creating it when missing, mode 0700) the cache in dir. A
// directory that belongs to another user, or that its group or other users
// may write to, is refused with an error saying how to fix it: anyone who
// can write there could plant content that jig would install.
func Open(dir string, opts ...Option) (*Cache, error) {
	if dir == "" {
		return nil, errors.New("no cache directory is known (no user cache directory); set JIG_CACHE_DIR")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	c := &Cache{dir: abs, max: DefaultMaxBytes, now: time.Now}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("opening the cache: %w", err)
	}
	if err := checkPrivate(abs, true); err != nil {
		return nil, err
	}
	for _, sub := range []string{"sha256", "refs", "tmp"} {
		p := filepath.Join(abs, sub)
		if err := os.MkdirAll(p, 0o700); err != nil {
			return nil, fmt.Errorf("opening the cache: %w", err)
		}
		if err := checkPrivate(p, false); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// checkPrivate refuses a cache directory others could plant content in.
// The cache directory itself may be a symbolic link (follow); its
// folders may not.
func checkPrivate(dir string, follow bool) error {
	err := safefile.CheckPrivateDir(dir, follow)
	var pe *safefile.PrivateDirError
	if !errors.As(err, &pe) {
		if err != nil {
			return fmt.Errorf("opening the cache: %w", err)
		}
		return nil
	}
	how := "set JIG_CACHE_DIR to a directory of your own"
	if fix := pe.Fix(); fix != "" {
		how = "run " + fix + ", or " + how
	}
	return fmt.Errorf("refusing the cache directory: %w, so others could plant content that jig would install; %s", err, how)
}

// Dir returns the cache's absolute directory.
func (c *Cache) Dir() string { return c.dir }

func (c *Cache) blobPath(digest string) string {
	h := registry.DigestHex(digest)
	if h == "" {
		return ""
	}
	return filepath.Join(c.dir, "sha256", h)
}

// Get returns the bytes stored under digest after checking that they hash
// to it. A missing, unreadable or corrupt entry reports false (a corrupt
// one is removed), and so does one that is not a regular file (a symbolic
// link, a FIFO): it is opened without following links or blocking, and
// never read past its size.
func (c *Cache) Get(digest string) ([]byte, bool) {
	p := c.blobPath(digest)
	if p == "" {
		return nil, false
	}
	b, err := safefile.ReadFileNoFollow(p, maxBlob)
	if err != nil {
		// A link or a special file is never an entry: a miss, left
		// alone (a later Put renames over it).
		return nil, false
	}
	if registry.Digest(b) != digest {
		_ = os.Remove(p)
		return nil, false
	}
	now := c.now()
	_ = os.Chtimes(p, now, now) // recently used; eviction goes by this
	return b, true
}

// Has reports whether a blob for digest is present: a regular file (not
// verified).
func (c *Cache) Has(digest string) bool {
	p := c.blobPath(digest)
	if p == "" {
		return false
	}
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().IsRegular()
}

// Put stores data and returns its digest. Storing present content only
// refreshes its use time.
func (c *Cache) Put(data []byte) (string, error) {
	if len(data) > maxBlob {
		return "", fmt.Errorf("a cache entry of %d bytes is too large", len(data))
	}
	d := registry.Digest(data)
	p := c.blobPath(d)
	if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) {
		now := c.now()
		_ = os.Chtimes(p, now, now)
		return d, nil
	}
	if err := c.writeAtomic(p, data); err != nil {
		return "", err
	}
	if c.written.Add(int64(len(data))) > c.max/10 {
		c.written.Store(0)
		_, _ = c.Trim()
	}
	return d, nil
}

// writeAtomic writes data to p through [safefile.WriteAtomic]: a
// temporary file in <dir>/tmp (swept by cleanTemp when a killed process
// left it), synced, renamed to p, and p's folder synced. Files and folders
// are private to the user.
func (c *Cache) writeAtomic(p string, data []byte) error {
	err := safefile.WriteAtomic(p, 0o600, safefile.Content(data), safefile.Options{DirPerm: 0o700, TempDir: filepath.Join(c.dir, "tmp")})
	if err != nil {
		return fmt.Errorf("writing to the cache: %w", err)
	}
	return nil
}

// ValidRef reports whether name is a usable ref name: slash-separated
// segments of printable ASCII without "\", ".", ".." or empty segments.
func ValidRef(name string) bool {
	if name == "" || len(name) > 1024 {
		return false
	}
	for seg := range strings.SplitSeq(name, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.HasPrefix(seg, ".tmp") {
			return false
		}
		for i := 0; i < len(seg); i++ {
			if seg[i] <= ' ' || seg[i] >= 0x7f || seg[i] == '\\' || seg[i] == ':' {
				return false
			}
		}
	}
	return true
}

func (c *Cache) refPath(name string) string {
	if !ValidRef(name) {
		return ""
	}
	return filepath.Join(c.dir, "refs", filepath.FromSlash(name))
}

// SetRef records that the immutable content named name (a versioned URL
// such as "<server>/@main/runtimes/node/1.0.0") has the given digest.
func (c *Cache) SetRef(name, digest string) error {
	p := c.refPath(name)
	if p == "" || !registry.ValidDigest(digest) {
		return fmt.Errorf("invalid cache ref %q -> %q", name, digest)
	}
	if cur, ok := c.Ref(name); ok && cur == digest {
		return nil
	}
	return c.writeAtomic(p, []byte(digest+"\n"))
}

// Ref returns the digest recorded for name.
func (c *Cache) Ref(name string) (string, bool) {
	p := c.refPath(name)
	if p == "" {
		return "", false
	}
	b, err := safefile.ReadFileNoFollow(p, maxRef)
	if err != nil {
		return "", false
	}
	d := strings.TrimSpace(string(b))
	if !registry.ValidDigest(d) {
		return "", false
	}
	return d, true
}

// Children lists the names directly under the ref folder prefix
// ("<server>/@main/runtimes/node"), sorted; refs and folders alike.
func (c *Cache) Children(prefix string) []string {
	p := c.refPath(prefix)
	if p == "" {
		return nil
	}
	if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
		return nil // opening a FIFO would block
	}
	ents, err := os.ReadDir(p)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// Entry is one ref of [Cache.List].
type Entry struct {
	// Ref is the ref name, Digest what it points to.
	Ref    string `json:"ref"`
	Digest string `json:"digest"`
	// Size is the blob's size, -1 when the blob is gone (evicted).
	Size int64 `json:"size"`
}

// List returns every ref, sorted by name.
func (c *Cache) List() ([]Entry, error) {
	root := filepath.Join(c.dir, "refs")
	var out []Entry
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		dg, ok := c.Ref(name)
		if !ok {
			return nil
		}
		e := Entry{Ref: name, Digest: dg, Size: -1}
		if fi, err := os.Lstat(c.blobPath(dg)); err == nil && fi.Mode().IsRegular() {
			e.Size = fi.Size()
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

// Problem is one finding of [Cache.Verify].
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Verify re-hashes every blob and checks every ref. It reports corrupt
// blobs and malformed refs; refs to evicted blobs are not problems.
// Nothing is changed.
func (c *Cache) Verify() (blobs int, problems []Problem, err error) {
	ents, err := os.ReadDir(filepath.Join(c.dir, "sha256"))
	if err != nil {
		return 0, nil, fmt.Errorf("reading the cache: %w", err)
	}
	for _, e := range ents {
		p := filepath.Join(c.dir, "sha256", e.Name())
		if !e.Type().IsRegular() {
			problems = append(problems, Problem{p, "not a regular file"})
			continue
		}
		want := registry.DigestPrefix + e.Name()
		if !registry.ValidDigest(want) {
			problems = append(problems, Problem{p, "name is not a sha-256 digest"})
			continue
		}
		b, err := safefile.ReadFileNoFollow(p, maxBlob)
		if errors.Is(err, fs.ErrNotExist) {
			continue // evicted meanwhile
		}
		if err != nil {
			problems = append(problems, Problem{p, err.Error()})
			continue
		}
		blobs++
		if got := registry.Digest(b); got != want {
			problems = append(problems, Problem{p, "content hashes to " + got})
		}
	}
	root := filepath.Join(c.dir, "refs")
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, rerr := safefile.ReadFileNoFollow(p, maxRef)
		if errors.Is(rerr, safefile.ErrNotRegular) || errors.Is(rerr, safefile.ErrTooLarge) {
			problems = append(problems, Problem{p, rerr.Error()})
			return nil
		}
		if rerr != nil {
			return nil
		}
		if !registry.ValidDigest(strings.TrimSpace(string(b))) {
			problems = append(problems, Problem{p, "ref does not hold a sha256 digest"})
		}
		return nil
	})
	return blobs, problems, err
}

// Size returns the total size of the stored blobs.
func (c *Cache) Size() (int64, error) {
	ents, err := os.ReadDir(filepath.Join(c.dir, "sha256"))
	if err != nil {
		return 0, err
	}
	var n int64
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n, nil
}

// Trim removes the least recently used blobs until the cache holds at most
// nine tenths of its cap, refs whose blob is gone, and temporary files
// left by killed processes. It returns the number of blobs removed. A
// process reading a removed blob sees a miss and fetches it again.
func (c *Cache) Trim() (int, error) {
	c.cleanTemp()
	dir := filepath.Join(c.dir, "sha256")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("trimming the cache: %w", err)
	}
	type blob struct {
		name string
		size int64
		used time.Time
	}
	var all []blob
	var total int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			continue
		}
		all = append(all, blob{e.Name(), fi.Size(), fi.ModTime()})
		total += fi.Size()
	}
	removed := 0
	if total > c.max {
		sort.Slice(all, func(i, j int) bool { return all[i].used.Before(all[j].used) })
		target := c.max / 10 * 9
		for _, b := range all {
			if total <= target {
				break
			}
			if err := os.Remove(filepath.Join(dir, b.name)); err == nil || errors.Is(err, fs.ErrNotExist) {
				total -= b.size
				removed++
			}
		}
	}
	if removed > 0 {
		c.dropDanglingRefs()
	}
	return removed, nil
}

func (c *Cache) dropDanglingRefs() {
	root := filepath.Join(c.dir, "refs")
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if dg, ok := c.Ref(filepath.ToSlash(rel)); ok && !c.Has(dg) {
			_ = os.Remove(p)
		}
		return nil
	})
}

func (c *Cache) cleanTemp() {
	dir := filepath.Join(c.dir, "tmp")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && c.now().Sub(fi.ModTime()) > staleTemp {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// Clean removes every entry, ref and imported mark. Processes using the
// cache meanwhile see misses and fetch again. The marks go last, once the
// refs' removal is durable: a stopped Clean never leaves a bundle's
// content unmarked.
func (c *Cache) Clean() error {
	for _, sub := range []string{"sha256", "refs", "tmp", importedDir} {
		if sub == importedDir {
			if err := safefile.SyncDir(c.dir); err != nil {
				return fmt.Errorf("cleaning the cache: %w", err)
			}
		}
		p := filepath.Join(c.dir, sub)
		// Rename first so a concurrent writer never sees a half-removed
		// tree under the live name.
		var rnd [8]byte
		_, _ = rand.Read(rnd[:])
		gone := filepath.Join(c.dir, ".gone-"+sub+"-"+hex.EncodeToString(rnd[:]))
		if err := os.Rename(p, gone); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return fmt.Errorf("cleaning the cache: %w", err)
		}
		if err := os.RemoveAll(gone); err != nil {
			return fmt.Errorf("cleaning the cache: %w", err)
		}
		if err := os.MkdirAll(p, 0o700); err != nil {
			return fmt.Errorf("cleaning the cache: %w", err)
		}
	}
	return nil
}
