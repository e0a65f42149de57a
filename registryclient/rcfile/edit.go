package rcfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/jigkit/jig/internal/wait"
)

// lockWait bounds how long [Edit] waits for another process that
// holds the rc file's lock.
const lockWait = 10 * time.Second

// Edit changes the rc file at path safely against concurrent
// writers: it takes an exclusive lock on a sibling lock file (the file's
// resolved name plus ".lock"), reads the file afresh, calls fn, and saves
// the result atomically, then releases the lock. Ten concurrent
// config updates (from ten CLI runs) therefore keep all ten entries. When fn returns an
// error nothing is written. Waiting for the lock stops when ctx is done, or
// after about 10 seconds with an error naming the lock file.
//
// A symbolic link at path is followed: the link stays and its target is
// rewritten (see [*Config.Save]).
func Edit(ctx context.Context, path string, fn func(*Config) error) (*Config, error) {
	target, err := resolveLink(path)
	if err != nil {
		return nil, fmt.Errorf("writing configuration file %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return nil, fmt.Errorf("writing configuration file %s: %w", path, err)
	}
	unlock, err := lockFile(ctx, target+".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	c, err := Load(path)
	if err != nil {
		return nil, err
	}
	if err := fn(c); err != nil {
		return nil, err
	}
	if err := c.Save(); err != nil {
		return nil, err
	}
	return c, nil
}

// resolveLink follows symbolic links at path (relative targets against the
// link's directory) until it reaches a file that is not a link, or a name
// that does not exist yet, and returns that name.
func resolveLink(path string) (string, error) {
	p := path
	for range 40 {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		t, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		p = t
	}
	return "", fmt.Errorf("too many levels of symbolic links")
}

// errLockBusy is returned by tryLock when another holder has the lock.
var errLockBusy = errors.New("lock is held")

// lockFile takes the exclusive lock at name, polling while another process
// holds it. The returned function releases it.
func lockFile(ctx context.Context, name string) (func(), error) {
	deadline := time.Now().Add(lockWait)
	delay := 5 * time.Millisecond
	for {
		unlock, err := tryLock(name)
		if err == nil {
			return unlock, nil
		}
		if !errors.Is(err, errLockBusy) {
			return nil, fmt.Errorf("locking configuration file (%s): %w", name, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("another jig process has held the configuration lock %s for over %s; try again, or delete the lock file if no jig is running", name, lockWait)
		}
		if err := wait.Sleep(ctx, delay); err != nil {
			return nil, err
		}
		delay = min(delay*2, 100*time.Millisecond)
	}
}
