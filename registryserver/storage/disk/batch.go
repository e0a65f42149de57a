package disk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	"golang.org/x/sync/errgroup"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registryserver/storage"
)

const (
	// maxBatchDirs is how many folder handles a batch keeps open between
	// Puts; beyond it, the handles no Put is using are closed.
	maxBatchDirs = 32
	// syncParallel is how many folders a batch's Sync flushes at once.
	syncParallel = 8
	// flushParallel is how many files a batch's Sync flushes at once:
	// flushes that wait together share the file system's journal
	// commits.
	flushParallel = 8
)

var _ storage.BatchPutter = (*Storage)(nil)

// NewBatch starts a batch of writes ([storage.Batch]). Its Put writes as
// [Storage.Put] does (a temporary file renamed over the key, under the
// key's lock) but opens each folder once for the whole batch, where Put
// walks from the root to the key's folder several times per key, and
// leaves flushing to [storage.Batch.Sync]: Put only starts writing the
// content out (on Linux), and Sync flushes every key's content, many at
// once, then each folder that received a key, or a new sub-folder, once.
// Flushes that wait together share the file system's journal commits,
// where one flush per key before its rename waited for a commit each:
// a 500-file publish spent most of its time there. Until Sync returns, a
// machine crash may leave a key of the batch empty or cut short, which
// is why nothing may name the keys before it has (see [storage.Batch]).
func (s *Storage) NewBatch() storage.Batch {
	return &batch{s: s, dirs: map[string]*batchDir{}, dirty: map[string]struct{}{}}
}

// batch is the disk backend's [storage.Batch].
type batch struct {
	s *Storage

	mu      sync.Mutex
	dirs    map[string]*batchDir // open folders, by path relative to the root
	dirty   map[string]struct{}  // folders to flush at Sync
	pending []string             // keys (as file paths) whose content Sync flushes
	closed  bool
}

// batchDir is an open folder of a batch.
type batchDir struct {
	root *os.Root
	refs int // Puts using it now
}

func (b *batch) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	const op = "put"
	if err := checkKey(ctx, op, key); err != nil {
		return err
	}
	name := filepath.FromSlash(key)
	dir, base := filepath.Dir(name), filepath.Base(name)
	var lastErr error
	for range 32 {
		d, err := b.acquire(dir)
		if err != nil {
			return fmt.Errorf("disk: %s %q: %w", op, key, err)
		}
		tmp, tmpName, err := newTemp(d.root, ".")
		if err != nil {
			b.release(dir, d, errors.Is(err, fs.ErrNotExist))
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrExist) {
				// The folder was removed (a Delete emptied it) since
				// it was opened, or the random name was taken: again.
				lastErr = err
				continue
			}
			return fmt.Errorf("disk: %s %q: %w", op, key, b.s.hideEscape(err))
		}
		_, err = b.s.replace(ctx, op, key, file{root: d.root, tmp: tmp, tmpName: tmpName, name: base, deferFlush: true}, r, size, nil)
		if err == nil {
			b.written(dir, name)
		}
		b.release(dir, d, false)
		return err
	}
	return fmt.Errorf("disk: %s %q: %w", op, key, lastErr)
}

// acquire returns the open folder dir, opening it (and creating it when
// it is missing) unless the batch holds it already. The caller releases
// it.
func (b *batch) acquire(dir string) (*batchDir, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errors.New("the batch is closed")
	}
	if d := b.dirs[dir]; d != nil {
		d.refs++
		return d, nil
	}
	if len(b.dirs) >= maxBatchDirs {
		for name, d := range b.dirs {
			if d.refs == 0 {
				d.root.Close()
				delete(b.dirs, name)
			}
		}
	}
	r, err := b.openDir(dir)
	if err != nil {
		return nil, err
	}
	d := &batchDir{root: r, refs: 1}
	b.dirs[dir] = d
	return d, nil
}

// release gives back a folder acquire returned; gone says the folder was
// removed, so the handle is dropped.
func (b *batch) release(dir string, d *batchDir, gone bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d.refs--
	if gone && b.dirs[dir] == d {
		delete(b.dirs, dir)
	}
	if d.refs == 0 && b.dirs[dir] != d {
		d.root.Close()
	}
}

// written notes that the key at the file path name, in the folder dir,
// was renamed into place: Sync flushes its content and its folder.
func (b *batch) written(dir, name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dirty[dir] = struct{}{}
	b.pending = append(b.pending, name)
}

// openDir opens the folder dir, creating it and its missing parents when
// it does not exist; the folders holding a new folder are marked to be
// flushed. b.mu is held.
func (b *batch) openDir(dir string) (*os.Root, error) {
	s := b.s
	r, err := s.root.OpenRoot(dir)
	if err == nil || !isNotExist(err) || s.isEscape(err) {
		return r, s.hideEscape(err)
	}
	// Which folders are missing: the nearest existing one and those
	// below it get a new entry each.
	var parents []string
	for p := dir; p != "."; {
		p = filepath.Dir(p)
		parents = append(parents, p)
		if _, err := s.root.Lstat(p); err == nil {
			break
		}
	}
	if err := s.root.MkdirAll(dir, 0o755); err != nil {
		if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("a parent of the key is a file, so it cannot hold keys: %w", err)
		}
		return nil, s.hideEscape(err)
	}
	for _, p := range parents {
		b.dirty[p] = struct{}{}
	}
	r, err = s.root.OpenRoot(dir)
	return r, s.hideEscape(err)
}

// Sync flushes, many at a time, the content of every key written since
// the last Sync, then, a few at a time, every folder that received a key
// or a new sub-folder: the folders' entries (the keys' names) are made
// durable once what they name is.
func (b *batch) Sync(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("disk: sync: %w", err)
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return errors.New("disk: sync: the batch is closed")
	}
	pending := b.pending
	dirs := make([]string, 0, len(b.dirty))
	for d := range b.dirty {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	b.mu.Unlock()

	err := b.each(ctx, pending, flushParallel, func(name string) error {
		if err := b.flushFile(name); err != nil {
			return fmt.Errorf("disk: flush %q: %w", filepath.ToSlash(name), b.s.hideEscape(err))
		}
		return nil
	})
	if err == nil {
		err = b.each(ctx, dirs, syncParallel, func(dir string) error {
			if err := b.syncDir(dir); err != nil {
				return fmt.Errorf("disk: flush folder %q: %w", filepath.ToSlash(dir), b.s.hideEscape(err))
			}
			return nil
		})
	}
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.pending = b.pending[len(pending):]
	for _, d := range dirs {
		delete(b.dirty, d)
	}
	b.mu.Unlock()
	return nil
}

// each runs fn on every name, at most limit at once, and returns the
// first failure (ctx's error when ctx ended).
func (b *batch) each(ctx context.Context, names []string, limit int, fn func(string) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for _, name := range names {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			return fn(name)
		})
	}
	if err := g.Wait(); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("disk: sync: %w", cerr)
		}
		return err
	}
	return nil
}

// flushFile makes the content of the key at the file path name durable,
// through the batch's handle of its folder when it holds one. A key
// removed since (a rollback deleted it) has nothing to keep.
func (b *batch) flushFile(name string) error {
	dir, base := filepath.Dir(name), filepath.Base(name)
	b.mu.Lock()
	d := b.dirs[dir]
	if d != nil {
		d.refs++
	}
	b.mu.Unlock()
	var f *os.File
	var err error
	if d != nil {
		f, err = d.root.OpenFile(base, os.O_RDONLY, 0)
		b.release(dir, d, false)
	} else {
		f, err = b.s.root.OpenFile(name, os.O_RDONLY, 0)
	}
	if isNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return flushData(f)
}

// syncDir flushes the folder dir, through the batch's handle when it holds
// one.
func (b *batch) syncDir(dir string) error {
	b.mu.Lock()
	d := b.dirs[dir]
	if d != nil {
		d.refs++
	}
	b.mu.Unlock()
	if d == nil {
		err := safefile.SyncDirIn(b.s.root, dir)
		if isNotExist(err) {
			return nil // removed since (a Delete emptied it): nothing to keep
		}
		return err
	}
	defer b.release(dir, d, false)
	return safefile.SyncDirIn(d.root, ".")
}

// Close closes the folders the batch holds.
func (b *batch) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	var errs []error
	for name, d := range b.dirs {
		errs = append(errs, d.root.Close())
		delete(b.dirs, name)
	}
	return errors.Join(errs...)
}
