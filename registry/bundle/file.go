package bundle

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/jigkit/jig/internal/safefile"
)

// OpenFile opens the bundle file at path and checks it with [Read]. The
// returned function closes the file; call it once the bundle's content has
// been read.
func OpenFile(path string, lim Limits) (*Bundle, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the bundle: %w", err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = errors.New("not a regular file")
	}
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("opening the bundle %s: %w", path, err)
	}
	b, err := Read(f, fi.Size(), lim)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return b, f.Close, nil
}

// WriteFile writes a bundle to path through write, with
// [safefile.WriteAtomic]: to a temporary file in the same folder, renamed
// to path only once write returned nil and the file was synced, then the
// folder synced. On any error (or an interrupted write) the temporary
// file is removed and path is left as it was; an error of write is
// returned as it is. The file is readable by its owner only (mode 0600),
// as a bundle may hold gated namespaces.
func WriteFile(path string, write func(w io.Writer) error) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	var werr error
	err = safefile.WriteAtomic(abs, 0o600, func(w io.Writer) error {
		werr = write(w)
		return werr
	}, safefile.Options{})
	if err == nil || werr != nil {
		return err
	}
	var pe *os.PathError
	if errors.As(err, &pe) && pe.Path != abs {
		err = pe.Err // the temporary file's name says nothing to the user
	}
	return fmt.Errorf("writing %s: %w", path, err)
}
