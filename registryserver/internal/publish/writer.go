package publish

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/storage"
)

const (
	// DefaultWriteConcurrency is how many files of a version a publish
	// writes at once by default (see [WithWriteConcurrency]).
	DefaultWriteConcurrency = 8
	// maxBuffered is the largest file a publish reads into memory to
	// write it while it reads the next ones; a larger file, or one of
	// unknown size, is written as it is read. A publish holds at most
	// its write concurrency times this much.
	maxBuffered = 128 << 10
)

// storeFiles runs writeFiles with a [PutFunc] that stores the files of v
// through w, appends every key it writes to *written, and returns the
// digest of each file stored, by normalised name, once every write has
// ended. On an error it returns once none is in progress.
func storeFiles(v Version, w *writer, written *[]string, writeFiles func(put PutFunc) error) (map[string]string, error) {
	var mu sync.Mutex
	digests := map[string]string{}
	seen := map[string]bool{}
	// writing holds, per file name folded to lower case, a channel closed
	// when its latest write ends: a name put again (or, on a file system
	// that ignores case, a name that differs only in case) is written
	// after the previous write of it, so the last put wins, as when files
	// were written one by one.
	writing := map[string]chan struct{}{}
	put := func(_ context.Context, name string, size int64, r io.Reader) error {
		name = registry.NormalizeFilePath(name)
		if !registry.ValidFilePath(name) || name == layout.ManifestFile || layout.Reserved(name) {
			return fmt.Errorf("publish: refusing file path %q", name)
		}
		key := layout.File(v.Namespace, v.registryPath(), v.Version, name)
		folded := strings.ToLower(name)
		ended := make(chan struct{})
		mu.Lock()
		prev, after := writing[folded]
		writing[folded] = ended
		if !seen[name] {
			seen[name] = true
			*written = append(*written, key)
		}
		mu.Unlock()
		if after {
			<-prev
		}
		return w.put(name, key, r, size, func(digest string, err error) {
			if err == nil {
				mu.Lock()
				digests[name] = digest
				mu.Unlock()
			}
			close(ended)
		})
	}
	if err := writeFiles(put); err != nil {
		w.stop()
		return nil, err
	}
	if err := w.wait(); err != nil {
		return nil, err
	}
	return digests, nil
}

// writer stores the files of one publish through a batch, up to a fixed
// number at a time. The first failure cancels the writes in progress and
// fails every later put. It is safe for concurrent use.
type writer struct {
	batch  storage.Batch
	ctx    context.Context // ends with the first failure, or with the publish
	cancel context.CancelCauseFunc
	// slots holds one entry per write that may run; an entry is the
	// buffer that write may reuse (nil until one was needed).
	slots chan []byte
	wg    sync.WaitGroup

	mu  sync.Mutex
	err error // the first failure
}

func newWriter(ctx context.Context, batch storage.Batch, n int) *writer {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &writer{batch: batch, ctx: ctx, cancel: cancel, slots: make(chan []byte, n)}
	for range n {
		w.slots <- nil
	}
	return w
}

// put stores r under key, the file name of the package. done is called
// once the write ends, whether or not put has returned by then, with the
// SHA-256 digest of what was stored or with the failure. put returns once
// r has been read: a file of at most maxBuffered bytes is read into a
// buffer and written meanwhile by a goroutine of its own; a larger one, or
// one of unknown size (-1), is written before put returns. It waits while
// the writer's limit of writes is running, and returns the first failure
// of any write once one failed.
func (w *writer) put(name, key string, r io.Reader, size int64, done func(digest string, err error)) error {
	failed := func(err error) error {
		err = w.fail(fmt.Errorf("publish: storing %s: %w", name, err))
		done("", err)
		return err
	}
	var buf []byte
	select {
	case buf = <-w.slots:
	case <-w.ctx.Done():
		err := w.failure()
		done("", err)
		return err
	}
	if err := w.failure(); err != nil {
		w.slots <- buf
		done("", err)
		return err
	}
	if size < 0 || size > maxBuffered {
		defer func() { w.slots <- buf }()
		h := sha256.New()
		if err := w.batch.Put(w.ctx, key, io.TeeReader(r, h), size); err != nil {
			return failed(err)
		}
		done(digestOf(h.Sum(nil)), nil)
		return nil
	}
	content, err := readContent(w.ctx, buf, r, size)
	if err != nil {
		w.slots <- buf
		return failed(err)
	}
	w.wg.Go(func() {
		defer func() { w.slots <- content[:0] }()
		sum := sha256.Sum256(content)
		if err := w.batch.Put(w.ctx, key, bytes.NewReader(content), size); err != nil {
			failed(err)
			return
		}
		done(digestOf(sum[:]), nil)
	})
	return nil
}

// wait waits for the writes in progress and returns the first failure.
func (w *writer) wait() error {
	w.wg.Wait()
	return w.failure()
}

// stop cancels the writes in progress and waits for them to end. It is
// safe to call more than once, and after wait.
func (w *writer) stop() {
	w.cancel(errStopped)
	w.wg.Wait()
}

// errStopped is the cause of a writer's context once stop ran.
var errStopped = errors.New("publish: the writes were stopped")

// fail records err as the writer's failure unless one was recorded
// already, cancels the writes in progress, and returns the failure.
func (w *writer) fail(err error) error {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
		w.cancel(err)
	}
	err = w.err
	w.mu.Unlock()
	return err
}

// failure returns the first failure, or, once the publish's context is
// done, its error; nil while all is well.
func (w *writer) failure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if err := w.ctx.Err(); err != nil {
		return context.Cause(w.ctx)
	}
	return nil
}

// readContent reads r, which must hold exactly size bytes, into buf
// (grown as needed) and returns them, with the errors of
// [storage.CopyContent] for content of another size.
func readContent(ctx context.Context, buf []byte, r io.Reader, size int64) ([]byte, error) {
	// One byte more than size, to notice longer content.
	buf = slices.Grow(buf[:0], int(size)+1)[:size+1]
	n, err := io.ReadFull(storage.ContextReader(ctx, r), buf)
	switch {
	case err == nil:
		return nil, fmt.Errorf("content is longer than the declared size %d", size)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		if int64(n) < size {
			return nil, fmt.Errorf("content is %d bytes, declared size %d: %w", n, size, io.ErrUnexpectedEOF)
		}
		return buf[:size], nil
	case ctx.Err() != nil:
		return nil, context.Cause(ctx)
	}
	return nil, fmt.Errorf("read content: %w", err)
}

func digestOf(sum []byte) string { return registry.DigestPrefix + hex.EncodeToString(sum) }
