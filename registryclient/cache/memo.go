package cache

import (
	"os"
	"sync"
)

// fileMemo keeps the last parsed content of a file of the cache, for
// readers: it is reused while the file is the same one. Every write of
// such a file renames a new file into place, so a change by any process
// is a new file.
type fileMemo[T any] struct {
	mu  sync.Mutex
	fi  os.FileInfo
	doc T
}

// read returns the parsed content of the file name: the memory when the
// file is the one it was parsed from, else what parse returns, remembered
// when the file did not change meanwhile. The result must not be changed.
func (m *fileMemo[T]) read(name string, parse func() (T, error)) (T, error) {
	fi, err := os.Lstat(name)
	if err != nil {
		return parse()
	}
	m.mu.Lock()
	if m.fi != nil && os.SameFile(fi, m.fi) && fi.ModTime().Equal(m.fi.ModTime()) && fi.Size() == m.fi.Size() {
		d := m.doc
		m.mu.Unlock()
		return d, nil
	}
	m.mu.Unlock()
	d, err := parse()
	if err != nil {
		return d, err
	}
	if after, err := os.Lstat(name); err == nil && os.SameFile(fi, after) {
		m.mu.Lock()
		m.fi, m.doc = fi, d
		m.mu.Unlock()
	}
	return d, nil
}
