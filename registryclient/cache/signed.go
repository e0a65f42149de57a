package cache

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/flock"
	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
)

// The signed-versions memory: for each registry ("@ns/path"), the
// highest version seen signed by a trusted key and the digest of the
// signed digest index of each version seen signed. It is what rollback
// protection compares a server's answers with. It lives in
// <dir>/signed.json, beside the content, and survives [Cache.Clean]
// (emptying the content cache must not disarm it). Every change is a
// read-modify-write under an exclusive lock (<dir>/signed.lock) and an
// atomic rename, so concurrent jig processes never lose each other's
// records.
const (
	signedFile = "signed.json"
	signedLock = "signed.lock"
	// MaxSignedRegistries bounds the registries remembered; the least
	// recently seen are dropped first.
	MaxSignedRegistries = 4096
	// MaxSignedVersions bounds the versions remembered per registry; the
	// lowest are dropped first (the highest is always kept).
	MaxSignedVersions = 256
	// maxSignedBytes bounds the file read.
	maxSignedBytes = 16 << 20
	// signedLockWait bounds the wait for another process's lock.
	signedLockWait = 10 * time.Second
)

// Seen is what the cache remembers of one registry's signed versions.
type Seen struct {
	// Highest is the highest version seen signed.
	Highest string `json:"highest"`
	// Versions maps each version seen signed to the digest
	// ("sha256:<hex>") of its signed digest index.
	Versions map[string]string `json:"versions"`
	// Last is when the registry was last recorded (Unix seconds).
	Last int64 `json:"last"`
}

type signedDoc struct {
	Registries map[string]*Seen `json:"registries"`
}

// SignedDigestChangedError reports a version seen signed before whose
// signed digest index now has another digest: the same version was
// re-signed with other content.
type SignedDigestChangedError struct {
	Registry, Version string
	Before, Now       string
}

func (e *SignedDigestChangedError) Error() string {
	return fmt.Sprintf("%s@%s was seen signed with digest index %s before, and is now signed with %s", e.Registry, e.Version, e.Before, e.Now)
}

// readSigned reads the memory; a missing file is empty. A damaged file
// is an error: it must not silently disarm rollback protection.
func (c *Cache) readSigned() (*signedDoc, error) {
	d := &signedDoc{Registries: map[string]*Seen{}}
	b, err := safefile.ReadFileNoFollow(filepath.Join(c.dir, signedFile), maxSignedBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the signed-versions memory: %w", err)
	}
	if err := json.Unmarshal(b, d); err != nil {
		return nil, fmt.Errorf("the signed-versions memory %s is damaged (%v); delete it to start over (rollback protection then restarts from what is seen next)", filepath.Join(c.dir, signedFile), err)
	}
	if d.Registries == nil {
		d.Registries = map[string]*Seen{}
	}
	return d, nil
}

// SeenSigned returns what is remembered of registry ("@ns/path").
func (c *Cache) SeenSigned(registryKey string) (Seen, bool, error) {
	d, err := c.readSignedMemo()
	if err != nil {
		return Seen{}, false, err
	}
	s, ok := d.Registries[registryKey]
	if !ok || s == nil {
		return Seen{}, false, nil
	}
	out := *s
	out.Versions = maps.Clone(s.Versions)
	return out, true, nil
}

// readSignedMemo is readSigned for readers: the parsed memory is reused
// while the file is the same one (every write renames a new file into
// place, so a change by any process is a new file). The result must not
// be changed.
func (c *Cache) readSignedMemo() (*signedDoc, error) {
	return c.signedMemo.read(filepath.Join(c.dir, signedFile), c.readSigned)
}

// RecordSigned remembers that version of registry ("@ns/path") was seen
// signed by a trusted key with a signed digest index of digest
// indexDigest. A version remembered with another digest is a
// [*SignedDigestChangedError] and nothing is changed.
func (c *Cache) RecordSigned(ctx context.Context, registryKey, version, indexDigest string) error {
	// The common case, a version seen before: no lock, no write.
	if s, ok, err := c.SeenSigned(registryKey); err == nil && ok {
		if before, ok := s.Versions[version]; ok {
			if before != indexDigest {
				return &SignedDigestChangedError{Registry: registryKey, Version: version, Before: before, Now: indexDigest}
			}
			if c.now().Sub(time.Unix(s.Last, 0)) < time.Hour {
				return nil
			}
		}
	}
	// Records made at the same time (a preset's registries resolve
	// concurrently) are written together: whoever gets the lock writes
	// every pending record at once.
	r := &signedRecord{key: registryKey, version: version, digest: indexDigest, done: make(chan error, 1)}
	c.pendMu.Lock()
	c.pending = append(c.pending, r)
	c.pendMu.Unlock()
	c.signedMu.Lock()
	defer c.signedMu.Unlock()
	select {
	case err := <-r.done: // written by the previous holder
		return err
	default:
	}
	c.pendMu.Lock()
	batch := c.pending
	c.pending = nil
	c.pendMu.Unlock()
	errs := make([]error, len(batch))
	err := c.editSignedLocked(ctx, func(d *signedDoc) (bool, error) {
		changed := false
		for i, r := range batch {
			if errs[i] = c.record(d, r); errs[i] == nil {
				changed = true
			}
		}
		return changed, nil
	})
	for i, r := range batch {
		if errs[i] == nil {
			errs[i] = err
		}
		r.done <- errs[i]
	}
	return <-r.done
}

// signedRecord is one pending [Cache.RecordSigned].
type signedRecord struct {
	key, version, digest string
	done                 chan error
}

// record applies r to d: a [*SignedDigestChangedError] when the version
// is remembered with another digest.
func (c *Cache) record(d *signedDoc, r *signedRecord) error {
	s := d.Registries[r.key]
	if s == nil {
		s = &Seen{}
		d.Registries[r.key] = s
	}
	if s.Versions == nil {
		s.Versions = map[string]string{}
	}
	if before, ok := s.Versions[r.version]; ok && before != r.digest {
		return &SignedDigestChangedError{Registry: r.key, Version: r.version, Before: before, Now: r.digest}
	}
	s.Versions[r.version] = r.digest
	if s.Highest == "" || registry.CompareVersions(r.version, s.Highest) > 0 {
		s.Highest = r.version
	}
	s.Last = c.now().Unix()
	if len(s.Versions) > MaxSignedVersions {
		vs := slices.Collect(maps.Keys(s.Versions))
		slices.SortFunc(vs, registry.CompareVersions)
		for _, v := range vs[:len(vs)-MaxSignedVersions] {
			delete(s.Versions, v)
		}
	}
	if len(d.Registries) > MaxSignedRegistries {
		keys := slices.Collect(maps.Keys(d.Registries))
		slices.SortFunc(keys, func(a, b string) int {
			if x, y := d.Registries[a].Last, d.Registries[b].Last; x != y {
				return cmp.Compare(x, y)
			}
			return strings.Compare(a, b)
		})
		for _, k := range keys[:len(keys)-MaxSignedRegistries] {
			delete(d.Registries, k)
		}
	}
	return nil
}

// ForgetSigned drops what is remembered of the registries named by what:
// "@ns/path" one registry, "@ns" every registry of the namespace, and
// "@ns/path@version" one version (the highest is then recomputed). It
// returns how many registries or versions were forgotten.
func (c *Cache) ForgetSigned(ctx context.Context, what string) (int, error) {
	n := 0
	err := c.editSigned(ctx, func(d *signedDoc) (bool, error) {
		key, version, _ := strings.Cut(strings.TrimPrefix(what, "@"), "@")
		key = "@" + key
		for k, s := range d.Registries {
			if k != key && !(strings.HasPrefix(k, key+"/") && !strings.Contains(key, "/")) {
				continue
			}
			if version == "" {
				delete(d.Registries, k)
				n++
				continue
			}
			if _, ok := s.Versions[version]; !ok {
				continue
			}
			delete(s.Versions, version)
			n++
			s.Highest = ""
			for v := range s.Versions {
				if s.Highest == "" || registry.CompareVersions(v, s.Highest) > 0 {
					s.Highest = v
				}
			}
			if len(s.Versions) == 0 {
				delete(d.Registries, k)
			}
		}
		return n > 0, nil
	})
	return n, err
}

// editSigned runs fn on the memory under the lock and writes it
// atomically when fn reports a change.
func (c *Cache) editSigned(ctx context.Context, fn func(*signedDoc) (bool, error)) error {
	c.signedMu.Lock()
	defer c.signedMu.Unlock()
	return c.editSignedLocked(ctx, fn)
}

// editSignedLocked is editSigned with c.signedMu held.
func (c *Cache) editSignedLocked(ctx context.Context, fn func(*signedDoc) (bool, error)) error {
	unlock, err := c.lockSigned(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	d, err := c.readSigned()
	if err != nil {
		return err
	}
	changed, err := fn(d)
	if err != nil || !changed {
		return err
	}
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return c.writeAtomic(filepath.Join(c.dir, signedFile), append(b, '\n'))
}

// lockSigned takes the memory's exclusive lock, waiting while another
// process holds it (at most about 10 s, or until ctx is done). Without
// flock(2) the atomic rename alone protects the file.
func (c *Cache) lockSigned(ctx context.Context) (func(), error) {
	return c.lockFile(ctx, signedLock, "the signed-versions memory")
}

// lockFile takes the exclusive lock <dir>/<lock> of the memory what,
// waiting while another process holds it (at most about 10 s, or until
// ctx is done).
func (c *Cache) lockFile(ctx context.Context, lock, what string) (func(), error) {
	name := filepath.Join(c.dir, lock)
	unlock, err := flock.Acquire(ctx, name, signedLockWait)
	switch {
	case errors.Is(err, flock.ErrBusy):
		return nil, fmt.Errorf("another jig process has held the lock %s for over %s; try again, or delete the lock file if no jig is running", name, signedLockWait)
	case err != nil && ctx.Err() == nil:
		return nil, fmt.Errorf("locking %s (%s): %w", what, name, err)
	}
	return unlock, err
}
