// Package authfile edits jig-server's auth.json in place: it adds and
// removes token entries for jig-server token create and token revoke,
// keeping every other member of the file as written (order included),
// under a lock so that two editors never lose each other's change, and
// writing the new file atomically so that a crash halfway leaves the old
// one whole.
package authfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/jigkit/jig/internal/flock"
	"github.com/jigkit/jig/internal/jsonkeys"
	"github.com/jigkit/jig/internal/safefile"
)

// MaxSize bounds how much of an auth.json is read; jig-server reads no
// more either.
const MaxSize = 4 << 20

// Member is one top-level member of auth.json: a namespace and its list,
// or another key (such as "issuers"), with its value as written.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Doc is an auth.json's top level, in file order.
type Doc struct {
	Members []Member
}

// Parse reads the top level of an auth.json document: a JSON object
// without a key twice (at any depth).
func Parse(data []byte) (*Doc, error) {
	if err := jsonkeys.Check(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, errors.New("auth.json must be a JSON object mapping namespaces to token lists")
	}
	d := &Doc{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("auth.json: %w", err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("auth.json: %w", err)
		}
		d.Members = append(d.Members, Member{Key: k.(string), Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("auth.json: %w", err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("auth.json: more than one JSON value")
	}
	return d, nil
}

// Get returns the value of key and whether the document has it.
func (d *Doc) Get(key string) (json.RawMessage, bool) {
	for _, m := range d.Members {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// Set replaces the value of key, or appends the member when the document
// has no such key.
func (d *Doc) Set(key string, v json.RawMessage) {
	for i, m := range d.Members {
		if m.Key == key {
			d.Members[i].Value = v
			return
		}
	}
	d.Members = append(d.Members, Member{Key: key, Value: v})
}

// Entries returns the entries of the list of namespace ns, each as
// written; ok is false when ns is absent or its value is not a list.
func (d *Doc) Entries(ns string) (entries []json.RawMessage, ok bool) {
	v, found := d.Get(ns)
	if !found {
		return nil, false
	}
	if err := json.Unmarshal(v, &entries); err != nil || entries == nil {
		return nil, false
	}
	return entries, true
}

// SetEntries replaces the list of namespace ns (adding ns when absent).
func (d *Doc) SetEntries(ns string, entries []json.RawMessage) error {
	if entries == nil {
		entries = []json.RawMessage{}
	}
	for i, e := range entries {
		var c bytes.Buffer
		if err := json.Compact(&c, e); err != nil {
			return err
		}
		entries[i] = c.Bytes()
	}
	v, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	d.Set(ns, v)
	return nil
}

// Bytes writes the document: one member per line, each namespace's
// entries one per line.
func (d *Doc) Bytes() []byte {
	var b bytes.Buffer
	b.WriteString("{")
	for i, m := range d.Members {
		if i > 0 {
			b.WriteString(",")
		}
		k, _ := json.Marshal(m.Key)
		b.WriteString("\n  ")
		b.Write(k)
		b.WriteString(": ")
		var entries []json.RawMessage
		if json.Unmarshal(m.Value, &entries) == nil && len(entries) > 0 {
			b.WriteString("[")
			for j, e := range entries {
				if j > 0 {
					b.WriteString(",")
				}
				var c bytes.Buffer
				_ = json.Compact(&c, e)
				b.WriteString("\n    ")
				b.Write(c.Bytes())
			}
			b.WriteString("\n  ]")
			continue
		}
		var c bytes.Buffer
		if json.Indent(&c, m.Value, "  ", "  ") != nil {
			c.Reset()
			c.Write(m.Value)
		}
		b.Write(c.Bytes())
	}
	b.WriteString("\n}\n")
	return b.Bytes()
}

// lockWait is how long Edit waits for another editor's lock.
const lockWait = 10 * time.Second

// Edit changes the auth.json at path: it takes the lock of the file (a
// ".<name>.lock" file beside it), reads and parses the file, calls
// change, checks the result with check (nil: no check) and writes it
// atomically with the file's mode. A file that does not exist starts
// empty and is created with mode 0600 when create is true. When change
// or check fails the file is left as it was.
func Edit(ctx context.Context, path string, create bool, change func(*Doc) error, check func([]byte) error) error {
	unlock, err := lock(ctx, path)
	if err != nil {
		return err
	}
	defer unlock()
	perm := fs.FileMode(0o600)
	doc := &Doc{}
	data, err := safefile.ReadFile(path, MaxSize)
	switch {
	case errors.Is(err, fs.ErrNotExist) && create:
	case errors.Is(err, safefile.ErrTooLarge):
		return fmt.Errorf("%s is larger than %d bytes", path, MaxSize)
	case err != nil:
		return err
	default:
		if fi, err := os.Stat(path); err == nil {
			perm = fi.Mode().Perm()
		}
		if doc, err = Parse(data); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := change(doc); err != nil {
		return err
	}
	out := doc.Bytes()
	if check != nil {
		if err := check(out); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return safefile.WriteFileAtomic(path, out, perm)
}

// lock takes the editing lock of path, waiting up to lockWait for another
// editor (or until ctx ends).
func lock(ctx context.Context, path string) (unlock func(), err error) {
	name := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		ok, err := flock.TryLock(f)
		if errors.Is(err, flock.ErrUnsupported) {
			ok, err = true, nil // no locks here: one editor at a time is up to the operator
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if ok {
			return func() { _ = flock.Unlock(f); f.Close() }, nil
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%s is being edited by another jig-server token command (%s is locked); try again when it is done", path, name)
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
