package bundle

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// WriteFile writes a bundle to path through write: to a temporary file in
// the same folder, renamed to path only once write returned nil and the
// file was synced. On any error (or an interrupted write) the temporary
// file is removed and path is left as it was. The file is readable by its
// owner only (mode 0600), as a bundle may hold gated namespaces.
func WriteFile(path string, write func(w io.Writer) error) (err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".*.tmp")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), abs); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
