package storage

import (
	"context"
	"fmt"
	"io"
)

// ContextReader returns a reader that fails with ctx's error once ctx is
// done, so a long copy from r stops when its request is cancelled. Backends
// use it to honour ctx while streaming content.
func ContextReader(ctx context.Context, r io.Reader) io.Reader {
	return &ctxReader{ctx: ctx, r: r}
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// CopyContent copies r into w for a Put, stopping with ctx's error when ctx
// is done. Unless size is -1 the content must be exactly size bytes: longer
// content is refused after reading at most one byte too many, and shorter
// content gives an error wrapping [io.ErrUnexpectedEOF]. It returns the
// number of bytes copied.
func CopyContent(ctx context.Context, w io.Writer, r io.Reader, size int64) (int64, error) {
	src := ContextReader(ctx, r)
	if size >= 0 {
		src = io.LimitReader(src, size+1)
	}
	// A small object needs no more buffer than its size (and the byte
	// that tells it is longer).
	bufSize := int64(32 << 10)
	if size >= 0 && size < bufSize {
		bufSize = size + 1
	}
	n, err := io.CopyBuffer(writerOnly{w}, src, make([]byte, bufSize))
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return n, ctxErr
		}
		return n, fmt.Errorf("read content: %w", err)
	}
	switch {
	case size >= 0 && n > size:
		return n, fmt.Errorf("content is longer than the declared size %d", size)
	case size >= 0 && n < size:
		return n, fmt.Errorf("content is %d bytes, declared size %d: %w", n, size, io.ErrUnexpectedEOF)
	}
	return n, nil
}

// writerOnly hides its writer's ReadFrom, which io.CopyBuffer would call
// instead of using the buffer it is given: an [*os.File]'s allocates a
// buffer of its own whenever the source is not a file.
type writerOnly struct{ io.Writer }
