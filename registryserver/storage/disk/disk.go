package disk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registryserver/storage"
)

const (
	// reservedDir holds lock files and health probes.
	reservedDir = ".jig"
	// referenceTmp is the reference server's upload scratch folder.
	referenceTmp = ".tmp"
	// tmpPrefix starts the names of files being written.
	tmpPrefix = ".jig-tmp-"
	// lockStripes is the number of lock files keys are spread over.
	lockStripes = 64
)

// Storage is a [storage.Storage] on a directory. Create it with [New]; it is
// safe for concurrent use.
type Storage struct {
	root *os.Root
	dir  string
	// escape is the error os.Root reports for paths that leave the root.
	escape error
	// sems serialise conditional writes inside this process, one per lock
	// stripe, before the cross-process flock is taken.
	sems [lockStripes]chan struct{}
	// lockFiles are the stripes' open lock files (Unix), kept from one
	// lock to the next so a write does not open one every time.
	lockFiles [lockStripes]atomic.Pointer[os.File]
	// fast opens keys for reading in one system call where the platform
	// allows it (fastopen_linux.go).
	fast fastOpener
}

var (
	_ storage.Storage           = (*Storage)(nil)
	_ storage.ConditionalPutter = (*Storage)(nil)
	_ storage.DirLister         = (*Storage)(nil)
	_ storage.Pinger            = (*Storage)(nil)
	_ storage.ScratchDirer      = (*Storage)(nil)
	_ storage.TempRemover       = (*Storage)(nil)
)

// New opens the storage directory root, creating it (and its parents) when
// it does not exist. Nothing else is written until the first write, so a
// read-only directory can be served.
func New(root string) (*Storage, error) {
	if root == "" {
		return nil, errors.New("disk: storage root is empty; set it to a directory such as ./data")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("disk: storage root %q: %w", root, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("disk: create storage root: %w", err)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("disk: open storage root: %w", err)
	}
	s := &Storage{root: r, dir: abs}
	// Learn the error os.Root gives for an escape, so it can be matched
	// with errors.Is rather than by its text.
	var pe *fs.PathError
	if _, err := r.Stat(".."); errors.As(err, &pe) && !errors.Is(pe.Err, fs.ErrNotExist) {
		s.escape = pe.Err
	}
	for i := range s.sems {
		s.sems[i] = make(chan struct{}, 1)
	}
	return s, nil
}

// Dir returns the absolute path of the storage root.
func (s *Storage) Dir() string { return s.dir }

// ScratchDir returns <root>/.jig/<name>, a folder inside the reserved
// ".jig" folder that no key can name: jig-server keeps the uploads it is
// receiving there. name must be one segment of letters, digits and '-'.
func (s *Storage) ScratchDir(name string) (string, error) {
	if name == "" || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != "" || name == "locks" {
		return "", fmt.Errorf("disk: scratch folder name %q: want letters, digits and '-' (not \"locks\")", name)
	}
	return filepath.Join(s.dir, reservedDir, name), nil
}

// Close releases the directory handle. The store is unusable afterwards.
func (s *Storage) Close() error {
	return errors.Join(s.fast.close(), s.closeLockFiles(), s.root.Close())
}

// ETag returns the reference server's ETag for a file:
// "<mtime in ms, hex>-<size, hex>", quoted.
func ETag(fi fs.FileInfo) string {
	return fmt.Sprintf(`"%x-%x"`, fi.ModTime().UnixMilli(), fi.Size())
}

func info(key string, fi fs.FileInfo) storage.Info {
	return storage.Info{Key: key, Size: fi.Size(), ModTime: fi.ModTime(), ETag: ETag(fi)}
}

// Get opens key. The returned reader is an [*os.File], so it also
// implements [io.ReadSeeker].
func (s *Storage) Get(ctx context.Context, key string) (io.ReadCloser, storage.Info, error) {
	if err := checkKey(ctx, "get", key); err != nil {
		return nil, storage.Info{}, err
	}
	f, ok, err := s.fast.open(s.root, key, oRDONLY)
	if !ok {
		f, err = s.root.OpenFile(filepath.FromSlash(key), oRDONLY, 0)
	}
	if err != nil {
		return nil, storage.Info{}, s.mapErr("get", key, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, storage.Info{}, s.mapErr("get", key, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, storage.Info{}, fmt.Errorf("disk: get %q: not a regular file: %w", key, storage.ErrNotFound)
	}
	return f, info(key, fi), nil
}

// Stat returns key's size, modification time and ETag.
func (s *Storage) Stat(ctx context.Context, key string) (storage.Info, error) {
	if err := checkKey(ctx, "stat", key); err != nil {
		return storage.Info{}, err
	}
	var fi fs.FileInfo
	f, ok, err := s.fast.open(s.root, key, oPATH)
	if ok && err == nil {
		fi, err = f.Stat()
		f.Close()
	}
	if !ok {
		fi, err = s.root.Stat(filepath.FromSlash(key))
	}
	if err != nil {
		return storage.Info{}, s.mapErr("stat", key, err)
	}
	if !fi.Mode().IsRegular() {
		return storage.Info{}, fmt.Errorf("disk: stat %q: not a regular file: %w", key, storage.ErrNotFound)
	}
	return info(key, fi), nil
}

// Put writes r to a temporary file next to key, flushes it and renames it
// over key. When size is not -1 it must equal the length of r.
func (s *Storage) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	_, err := s.write(ctx, "put", key, r, size, nil)
	return err
}

// PutIf is [Storage.Put] under a condition: key's current ETag must equal
// ifMatch, or, with ifMatch "", key must not exist. Otherwise it returns
// [storage.ErrPrecondition] and changes nothing. The check and the rename
// happen under a lock shared by every process using the directory (Put
// renames under the same lock).
func (s *Storage) PutIf(ctx context.Context, key string, r io.Reader, size int64, ifMatch string) (string, error) {
	return s.write(ctx, "conditional put", key, r, size, &ifMatch)
}

func (s *Storage) write(ctx context.Context, op, key string, r io.Reader, size int64, ifMatch *string) (etag string, err error) {
	if err := checkKey(ctx, op, key); err != nil {
		return "", err
	}
	name := filepath.FromSlash(key)
	tmp, tmpName, err := s.createTemp(filepath.Dir(name))
	if err != nil {
		return "", fmt.Errorf("disk: %s %q: %w", op, key, err)
	}
	etag, err = s.replace(ctx, op, key, file{root: s.root, tmp: tmp, tmpName: tmpName, name: name}, r, size, ifMatch)
	if err != nil {
		return "", err
	}
	if err := safefile.SyncDirIn(s.root, filepath.Dir(name)); err != nil {
		return "", fmt.Errorf("disk: %s %q: flush folder: %w", op, key, err)
	}
	return etag, nil
}

// file is a write in progress: the temporary file tmp, created as tmpName
// in root, that is to replace name in root. root is the storage root or
// a batch's handle of the key's folder. A batch sets deferFlush: the
// content is flushed by the batch's Sync instead of before the rename.
type file struct {
	root       *os.Root
	tmp        *os.File
	tmpName    string
	name       string
	deferFlush bool
}

// replace fills f's temporary file from r, flushes it (unless
// f.deferFlush) and renames it over key under key's lock, checking ifMatch
// when it is not nil. It always closes the temporary file, and removes it
// unless it was renamed. It does not flush the folder. It returns key's new ETag when ifMatch is not nil.
func (s *Storage) replace(ctx context.Context, op, key string, f file, r io.Reader, size int64, ifMatch *string) (etag string, err error) {
	// The temporary file stays open, and so locked (see RemoveTemp), until
	// it has been renamed over key.
	renamed := false
	defer func() {
		if !renamed {
			f.root.Remove(f.tmpName)
		}
		f.tmp.Close()
	}()
	if _, err := storage.CopyContent(ctx, f.tmp, r, size); err != nil {
		return "", fmt.Errorf("disk: %s %q: %w", op, key, err)
	}
	if f.deferFlush {
		startWriteback(f.tmp)
	} else if err := f.tmp.Sync(); err != nil {
		return "", fmt.Errorf("disk: %s %q: flush: %w", op, key, err)
	}

	// Plain writes take the key's lock too, so a conditional write never
	// checks an ETag that a concurrent plain write is about to replace.
	unlock, err := s.lock(ctx, key)
	if err != nil {
		return "", fmt.Errorf("disk: %s %q: %w", op, key, err)
	}
	defer unlock()
	cur, err := f.root.Stat(f.name)
	if f.root != s.root && s.isEscape(err) {
		// A symbolic link at key that leads out of its folder, but
		// maybe not out of the storage root.
		cur, err = s.root.Stat(filepath.FromSlash(key))
	}
	exists := err == nil
	if err != nil && !isNotExist(err) {
		return "", s.mapErr(op, key, err)
	}
	if ifMatch != nil {
		if (*ifMatch == "" && exists) || (*ifMatch != "" && (!exists || !cur.Mode().IsRegular() || ETag(cur) != *ifMatch)) {
			return "", fmt.Errorf("disk: %s %q: %w", op, key, storage.ErrPrecondition)
		}
	}
	if exists && cur.Mode().IsRegular() {
		if err := advanceModTime(f.root, f.tmpName, cur); err != nil {
			return "", fmt.Errorf("disk: %s %q: %w", op, key, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("disk: %s %q: %w", op, key, err)
	}
	if err := f.root.Rename(f.tmpName, f.name); err != nil {
		return "", s.mapErr(op, key, err)
	}
	renamed = true
	if ifMatch == nil {
		return "", nil
	}
	fi, err := f.root.Stat(f.name)
	if err != nil {
		return "", s.mapErr(op, key, err)
	}
	return ETag(fi), nil
}

// createTemp creates a new temporary file in dir, creating dir first. A
// concurrent Delete may remove an emptied folder in between, or between
// two levels MkdirAll creates; then it retries.
func (s *Storage) createTemp(dir string) (*os.File, string, error) {
	var lastErr error
	for range 32 {
		if dir != "." {
			if err := s.root.MkdirAll(dir, 0o755); err != nil {
				if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
					return nil, "", fmt.Errorf("a parent of the key is a file, so it cannot hold keys: %w", err)
				}
				if errors.Is(err, fs.ErrNotExist) && !s.isEscape(err) {
					lastErr = err
					continue
				}
				return nil, "", s.hideEscape(err)
			}
		}
		f, name, err := newTemp(s.root, dir)
		if err == nil {
			return f, name, nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrExist) {
			return nil, "", s.hideEscape(err)
		}
		lastErr = err
	}
	return nil, "", lastErr
}

// newTemp creates a new temporary file in the folder dir of root and
// locks it. An error wrapping [fs.ErrNotExist] says dir is gone, one
// wrapping [fs.ErrExist] that the random name was taken.
func newTemp(root *os.Root, dir string) (*os.File, string, error) {
	var rnd [8]byte
	rand.Read(rnd[:])
	name := filepath.Join(dir, tmpPrefix+hex.EncodeToString(rnd[:]))
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, "", err
	}
	if err := lockTemp(f); err != nil {
		f.Close()
		root.Remove(name)
		return nil, "", err
	}
	return f, name, nil
}

// advanceModTime makes sure the file about to replace cur gets a different
// ETag even when it has the same size and is written within the same
// millisecond (or second, on coarse file systems).
func advanceModTime(root *os.Root, tmpName string, cur fs.FileInfo) error {
	fi, err := root.Stat(tmpName)
	if err != nil {
		return err
	}
	if fi.Size() != cur.Size() {
		return nil
	}
	for _, step := range []time.Duration{time.Millisecond, time.Second} {
		if fi.ModTime().UnixMilli() > cur.ModTime().UnixMilli() {
			return nil
		}
		t := cur.ModTime().Add(step)
		if err := root.Chtimes(tmpName, t, t); err != nil {
			return err
		}
		if fi, err = root.Stat(tmpName); err != nil {
			return err
		}
	}
	if fi.ModTime().UnixMilli() <= cur.ModTime().UnixMilli() {
		return errors.New("cannot give the new content a newer modification time than the old; check the file system's timestamps")
	}
	return nil
}

// Delete removes key and then every folder above it that became empty, so
// listings do not show empty namespaces or registries. A missing key is not
// an error.
func (s *Storage) Delete(ctx context.Context, key string) error {
	if err := checkKey(ctx, "delete", key); err != nil {
		return err
	}
	name := filepath.FromSlash(key)
	fi, err := s.root.Lstat(name)
	if err != nil {
		if isNotExist(err) {
			return nil
		}
		return s.mapErr("delete", key, err)
	}
	if fi.IsDir() {
		return nil // a folder is not a key
	}
	if err := s.root.Remove(name); err != nil && !isNotExist(err) {
		return s.mapErr("delete", key, err)
	}
	for dir := filepath.Dir(name); dir != "."; dir = filepath.Dir(dir) {
		if s.root.Remove(dir) != nil {
			break // not empty (or already gone): stop climbing
		}
	}
	return nil
}

// List returns every key starting with prefix, sorted bytewise. Reserved
// and temporary files, folders, and symbolic links that do not lead to a
// regular file inside the root are left out.
func (s *Storage) List(ctx context.Context, prefix string) ([]string, error) {
	if err := storage.CheckPrefix(ctx, "disk", prefix); err != nil {
		return nil, err
	}
	start := "."
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		start = prefix[:i]
	}
	fsys := s.root.FS()
	keys := []string{}
	err := fs.WalkDir(fsys, start, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if isNotExist(err) {
				return nil // the start folder is missing, or vanished meanwhile
			}
			return err
		}
		if p == "." {
			return nil
		}
		if reserved(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if p != start && !strings.HasPrefix(p+"/", prefix) && !strings.HasPrefix(prefix, p+"/") {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(p, prefix) || !storage.ValidKey(p) {
			return nil
		}
		if s.isFile(d, p) {
			keys = append(keys, p)
		}
		return nil
	})
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("disk: list %q: %w", prefix, cerr)
		}
		return nil, fmt.Errorf("disk: list %q: %w", prefix, s.hideEscape(err))
	}
	slices.Sort(keys)
	return keys, nil
}

// RemoveTemp removes the temporary files (".jig-tmp-*") under the folder
// prefix whose writer is gone, and the folders that leaves empty. A writer
// holds an flock(2) lock on its temporary file until it has renamed it, so
// a file whose lock is free was left by a process that died while writing
// (or by a writer in the instant between creating and locking it: only
// call it where nobody writes). Without flock(2) it removes only files
// older than a day.
func (s *Storage) RemoveTemp(ctx context.Context, prefix string) (int, error) {
	if !strings.HasSuffix(prefix, "/") || !storage.ValidPrefix(prefix) || reserved(strings.TrimSuffix(prefix, "/")) {
		return 0, fmt.Errorf("disk: remove temporary files under %q: want a folder ending in \"/\": %w", prefix, storage.ErrInvalidKey)
	}
	start := strings.TrimSuffix(prefix, "/")
	var stale []string
	err := fs.WalkDir(s.root.FS(), start, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if isNotExist(err) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() && strings.HasPrefix(d.Name(), tmpPrefix) {
			stale = append(stale, p)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("disk: remove temporary files under %q: %w", prefix, s.hideEscape(err))
	}
	n := 0
	for _, p := range stale {
		name := filepath.FromSlash(p)
		f, err := s.root.OpenFile(name, os.O_RDONLY, 0)
		if err != nil {
			continue // renamed or removed meanwhile
		}
		free, err := tempAbandoned(f)
		if err == nil && free {
			if err := s.root.Remove(name); err == nil {
				n++
			}
		}
		f.Close()
		for dir := filepath.Dir(name); dir != "."; dir = filepath.Dir(dir) {
			if s.root.Remove(dir) != nil {
				break
			}
		}
	}
	return n, nil
}

// isFile reports whether the entry at p is a regular file, following a
// symbolic link only inside the root.
func (s *Storage) isFile(d fs.DirEntry, p string) bool {
	if d.Type().IsRegular() {
		return true
	}
	if d.Type()&fs.ModeSymlink == 0 {
		return false
	}
	fi, err := s.root.Stat(filepath.FromSlash(p))
	return err == nil && fi.Mode().IsRegular()
}

// ListDir returns the immediate children of the folder prefix ("" or ending
// in "/"): files as keys, sub-folders as prefixes ending in "/". An empty
// folder left behind by hand is listed too; [Storage.Delete] removes the
// folders it empties.
func (s *Storage) ListDir(ctx context.Context, prefix string) ([]string, error) {
	if err := storage.CheckFolder(ctx, "disk", prefix); err != nil {
		return nil, err
	}
	dir := strings.TrimSuffix(prefix, "/")
	if dir == "" {
		dir = "."
	}
	entries, err := fs.ReadDir(s.root.FS(), dir)
	if err != nil {
		if isNotExist(err) {
			return []string{}, nil
		}
		return nil, fmt.Errorf("disk: list folder %q: %w", prefix, s.hideEscape(err))
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		p := prefix + e.Name()
		if reserved(p) || !storage.ValidKey(p) {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			fi, err := s.root.Stat(filepath.FromSlash(p))
			if err != nil {
				continue // dangling, or leads outside the root
			}
			isDir = fi.IsDir()
			if !isDir && !fi.Mode().IsRegular() {
				continue
			}
		} else if !isDir && !e.Type().IsRegular() {
			continue
		}
		if isDir {
			p += "/"
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return out, nil
}

// Ping checks that the root is still the directory [New] opened and that a
// file can be created and removed in it.
func (s *Storage) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("disk: ping: %w", err)
	}
	opened, err := s.root.Stat(".")
	if err != nil {
		return fmt.Errorf("disk: ping: storage root %s: %w", s.dir, err)
	}
	now, err := os.Stat(s.dir)
	if err != nil {
		return fmt.Errorf("disk: ping: storage root: %w", err)
	}
	if !os.SameFile(opened, now) {
		return fmt.Errorf("disk: ping: storage root %s was replaced after the server opened it; restart the server", s.dir)
	}
	// The probe is a temporary file at the top (reserved, never listed,
	// removed by RemoveTemp if a crash leaves it), not in .jig: a storage
	// the server only reads gets no .jig folder until a publish needs one.
	var rnd [8]byte
	rand.Read(rnd[:])
	probe := tmpPrefix + "ping-" + hex.EncodeToString(rnd[:])
	f, err := s.root.OpenFile(probe, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("disk: ping: storage root %s is not writable: %w", s.dir, err)
	}
	_, werr := f.WriteString("ok\n")
	cerr := f.Close()
	rerr := s.root.Remove(probe)
	if err := errors.Join(werr, cerr, rerr); err != nil {
		return fmt.Errorf("disk: ping: storage root %s is not writable: %w", s.dir, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("disk: ping: %w", err)
	}
	return nil
}

// checkKey validates key for this backend and checks ctx.
func checkKey(ctx context.Context, op, key string) error {
	if storage.ValidKey(key) && reserved(key) {
		return fmt.Errorf("disk: %s %q: the name is reserved by the disk backend: %w", op, key, storage.ErrInvalidKey)
	}
	return storage.CheckKey(ctx, "disk", op, key)
}

// reserved reports whether the slash-separated path p names something the
// backend keeps for itself.
func reserved(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	if first == reservedDir || first == referenceTmp {
		return true
	}
	for _, seg := range strings.Split(p, "/") {
		if strings.HasPrefix(seg, tmpPrefix) {
			return true
		}
	}
	return false
}

func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func (s *Storage) isEscape(err error) bool {
	return s.escape != nil && errors.Is(err, s.escape)
}

// hideEscape replaces os.Root's escape error with a clear one.
func (s *Storage) hideEscape(err error) error {
	if s.isEscape(err) {
		return fmt.Errorf("a symbolic link leads outside the storage root %s; jig does not follow it: %w", s.dir, storage.ErrNotFound)
	}
	return err
}

func (s *Storage) mapErr(op, key string, err error) error {
	switch {
	case isNotExist(err):
		return fmt.Errorf("disk: %s %q: %w", op, key, storage.ErrNotFound)
	case s.isEscape(err):
		return fmt.Errorf("disk: %s %q: %w", op, key, s.hideEscape(err))
	}
	return fmt.Errorf("disk: %s %q: %w", op, key, err)
}
