//go:build !unix

package disk

import (
	"context"
	"os"
	"time"
)

// lock takes this process's lock for key's stripe. Without flock(2), other
// processes sharing the directory are not excluded.
func (s *Storage) lock(ctx context.Context, key string) (unlock func(), err error) {
	sem := s.sems[stripeOf(key)]
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// closeLockFiles does nothing: without flock(2) there are no lock files.
func (s *Storage) closeLockFiles() error { return nil }

// lockTemp does nothing without flock(2).
func lockTemp(*os.File) error { return nil }

// tempAbandoned cannot see a writer's lock without flock(2): a temporary
// file older than a day is taken for abandoned.
func tempAbandoned(f *os.File) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	return time.Since(fi.ModTime()) > 24*time.Hour, nil
}
