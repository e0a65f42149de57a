package scratch

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jigkit/jig/internal/safefile"
)

// State is what [Dir.Owner] knows about an owner.
type State int

// The states of an owner.
const (
	Unknown State = iota // no trace of the owner in the folder
	Alive                // the owner holds its lock
	Dead                 // the owner's lock is free, or a sweep marked it dead
)

var stateNames = [...]string{"unknown", "alive", "dead"}

// String returns "unknown", "alive" or "dead".
func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return "unknown"
	}
	return stateNames[s]
}

const (
	idLen         = 32 // hex characters of an owner id
	lockSuffix    = ".lock"
	pendingSuffix = ".lock-new"
	deadSuffix    = ".dead"
	// deadKeep is how long a dead owner's marker is kept.
	deadKeep = time.Hour
	// pendingGrace is the age after which an unlocked pending lock file
	// is taken for the debris of an owner that died taking its lock.
	pendingGrace = time.Minute
	// lockless is the age after which, without flock(2), a file is
	// assumed abandoned.
	lockless = 24 * time.Hour
)

// Dir is one process's share of a scratch folder. The zero value is not
// usable; call [Open]. It is safe for concurrent use.
type Dir struct {
	path string
	id   string

	mu     sync.Mutex
	lock   *os.File // held while the process lives; nil until first use
	closed bool
}

// Open returns the share of a new owner in the folder path. It writes
// nothing: the folder and the owner's lock file are created on first use
// ([Dir.CreateTemp], [Dir.Acquire]). A folder that exists already must be
// private to this user: a directory, not a symbolic link, owned by this
// user and not writable by others.
func Open(path string) (*Dir, error) {
	if strings.TrimSpace(path) == "" {
		return nil, errors.New("scratch folder is empty")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("scratch folder %q: %w", path, err)
	}
	if _, err := os.Lstat(abs); err == nil {
		if err := checkPrivate(abs); err != nil {
			return nil, err
		}
	}
	return &Dir{path: abs, id: newID()}, nil
}

// Path returns the folder's absolute path.
func (d *Dir) Path() string { return d.path }

// ID returns the owner id of this process.
func (d *Dir) ID() string { return d.id }

// Acquire creates the folder when needed and takes this owner's lock, once.
// After it returns nil, other processes see this owner as [Alive] until it
// exits or calls [Dir.Close].
func (d *Dir) Acquire() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errors.New("scratch folder is closed")
	}
	if d.lock != nil {
		return nil
	}
	if err := os.MkdirAll(d.path, 0o700); err != nil {
		return fmt.Errorf("creating the scratch folder: %w", err)
	}
	if err := checkPrivate(d.path); err != nil {
		return err
	}
	pending := filepath.Join(d.path, d.id+pendingSuffix)
	f, err := os.OpenFile(pending, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("creating the scratch lock file: %w", err)
	}
	if ok, err := tryLock(f); err != nil || !ok {
		f.Close()
		os.Remove(pending)
		return fmt.Errorf("locking %s: %v", pending, cmpErr(err, "held by another process"))
	}
	if err := os.Rename(pending, filepath.Join(d.path, d.id+lockSuffix)); err != nil {
		f.Close()
		os.Remove(pending)
		return fmt.Errorf("creating the scratch lock file: %w", err)
	}
	d.lock = f
	return nil
}

func cmpErr(err error, msg string) any {
	if err != nil {
		return err
	}
	return msg
}

// CreateTemp creates a new file of this owner in the folder, named
// <id>-<random><suffix>, taking the owner's lock first. The caller closes
// and removes it; a process that dies leaves it to the next [Dir.Sweep].
func (d *Dir) CreateTemp(suffix string) (*os.File, error) {
	if strings.ContainsAny(suffix, `/\*`) {
		return nil, fmt.Errorf("scratch: bad suffix %q", suffix)
	}
	if err := d.Acquire(); err != nil {
		return nil, err
	}
	return os.CreateTemp(d.path, d.id+"-*"+suffix)
}

// Owner reports what is known of the owner id: [Alive] while its lock is
// held, [Dead] once it is free or a sweep marked the owner dead, and
// [Unknown] when the folder holds nothing of it (an owner on another host,
// or one whose dead marker has expired). This process's own id is [Alive].
func (d *Dir) Owner(id string) State {
	if id == d.id {
		return Alive
	}
	if !validID(id) {
		return Unknown
	}
	f, err := os.Open(filepath.Join(d.path, id+lockSuffix))
	if err == nil {
		defer f.Close()
		ok, err := tryLock(f)
		switch {
		case err != nil || (!ok && !canLock):
			return Unknown
		case ok:
			return Dead // closing f releases the lock again
		}
		return Alive
	}
	if _, err := os.Lstat(filepath.Join(d.path, id+deadSuffix)); err == nil {
		return Dead
	}
	return Unknown
}

// Swept is what one [Dir.Sweep] removed.
type Swept struct {
	Files int   // temporary files of dead owners
	Bytes int64 // their size
}

// Sweep removes the temporary files of every dead owner and of owners that
// left no lock file, marks dead owners with <id>.dead, and removes expired
// markers and the pending lock files of owners that died while taking
// their lock. This process's files and those of live owners are kept. A
// missing folder holds nothing to sweep.
func (d *Dir) Sweep() (Swept, error) {
	var sw Swept
	entries, err := os.ReadDir(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		return sw, nil
	}
	if err != nil {
		return sw, fmt.Errorf("reading the scratch folder: %w", err)
	}
	type owner struct {
		lock, pending, dead bool
		files               []fs.DirEntry
	}
	owners := map[string]*owner{}
	for _, e := range entries {
		name := e.Name()
		if len(name) <= idLen || !validID(name[:idLen]) || !e.Type().IsRegular() {
			continue
		}
		id, rest := name[:idLen], name[idLen:]
		if id == d.id {
			continue
		}
		o := owners[id]
		if o == nil {
			o = &owner{}
			owners[id] = o
		}
		switch {
		case rest == lockSuffix:
			o.lock = true
		case rest == pendingSuffix:
			o.pending = true
		case rest == deadSuffix:
			o.dead = true
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > deadKeep {
				os.Remove(filepath.Join(d.path, name))
			}
		case rest[0] == '-':
			o.files = append(o.files, e)
		}
	}
	var errs []error
	for id, o := range owners {
		if o.pending {
			d.removeIfFree(filepath.Join(d.path, id+pendingSuffix), pendingGrace)
		}
		if o.lock {
			n, b, err := d.sweepLocked(id, o.files)
			sw.Files, sw.Bytes = sw.Files+n, sw.Bytes+b
			errs = append(errs, err)
			continue
		}
		if o.pending && canLock {
			continue // taking its lock right now, or just died doing so
		}
		// No lock file: an owner creates it before any file, so these
		// were left by an owner whose lock was removed.
		if _, err := os.Lstat(filepath.Join(d.path, id+lockSuffix)); err == nil {
			continue // created after the folder was read: a new owner
		}
		for _, e := range o.files {
			if !canLock && !older(e, lockless) {
				continue
			}
			n, err := removeEntry(d.path, e)
			if n >= 0 {
				sw.Files, sw.Bytes = sw.Files+1, sw.Bytes+n
			}
			errs = append(errs, err)
		}
	}
	return sw, errors.Join(errs...)
}

// sweepLocked removes the files of owner id when its lock is free, while
// holding that lock, then turns the lock file into the dead marker.
func (d *Dir) sweepLocked(id string, files []fs.DirEntry) (n int, bytes int64, err error) {
	lockPath := filepath.Join(d.path, id+lockSuffix)
	f, err := os.Open(lockPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, 0, nil // another sweeper got there first
		}
		return 0, 0, err
	}
	defer f.Close()
	ok, err := tryLock(f)
	if err != nil {
		return 0, 0, err
	}
	var errs []error
	if !ok {
		if canLock {
			return 0, 0, nil // alive
		}
		for _, e := range files {
			if older(e, lockless) {
				if s, err := removeEntry(d.path, e); s >= 0 {
					n, bytes = n+1, bytes+s
				} else {
					errs = append(errs, err)
				}
			}
		}
		return n, bytes, errors.Join(errs...)
	}
	for _, e := range files {
		if s, err := removeEntry(d.path, e); s >= 0 {
			n, bytes = n+1, bytes+s
		} else {
			errs = append(errs, err)
		}
	}
	dead := filepath.Join(d.path, id+deadSuffix)
	if err := os.Rename(lockPath, dead); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	} else {
		now := time.Now()
		os.Chtimes(dead, now, now)
	}
	return n, bytes, errors.Join(errs...)
}

// removeIfFree removes the file at path when nobody holds its lock and it
// is older than grace: a live owner creates its pending lock file an
// instant before it locks it.
func (d *Dir) removeIfFree(path string, grace time.Duration) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || time.Since(fi.ModTime()) < grace {
		return
	}
	if ok, err := tryLock(f); err == nil && ok {
		os.Remove(path)
	}
}

// removeEntry removes the file e of dir and returns its size, or -1 and
// the error when it could not be removed. A file already gone counts as
// removed with size 0.
func removeEntry(dir string, e fs.DirEntry) (int64, error) {
	var size int64
	if fi, err := e.Info(); err == nil {
		size = fi.Size()
	}
	if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return -1, err
	}
	return size, nil
}

func older(e fs.DirEntry, age time.Duration) bool {
	fi, err := e.Info()
	return err == nil && time.Since(fi.ModTime()) > age
}

// Close removes this owner's temporary files and lock file and releases
// the lock. Files still open keep working until they are closed. Calling
// it again does nothing.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	if d.lock == nil {
		return nil
	}
	var errs []error
	if matches, err := filepath.Glob(filepath.Join(d.path, d.id+"-*")); err == nil {
		for _, m := range matches {
			if err := os.Remove(m); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	if err := os.Remove(filepath.Join(d.path, d.id+lockSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	errs = append(errs, d.lock.Close())
	d.lock = nil
	return errors.Join(errs...)
}

func newID() string {
	var b [idLen / 2]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func validID(id string) bool {
	if len(id) != idLen {
		return false
	}
	for i := range len(id) {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// checkPrivate refuses a folder that is a symbolic link, belongs to
// another user or that other users may write to: they could read the
// uploads, or plant files and links the server would trust.
func checkPrivate(path string) error {
	err := safefile.CheckPrivateDir(path, false)
	var pe *safefile.PrivateDirError
	if !errors.As(err, &pe) {
		return err
	}
	if fix := pe.Fix(); fix != "" {
		return fmt.Errorf("scratch folder %w; run %s or point it at a directory of the server's own", err, fix)
	}
	return fmt.Errorf("scratch folder %w; point it at a directory of the server's own", err)
}
