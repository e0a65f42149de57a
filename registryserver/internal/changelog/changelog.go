// Package changelog is the catalog's change log in storage: one small
// object per committed change (a registry version listed, a preset
// published, the index rebuilt), written by whoever commits it (a
// publish, an import, a mirror fetch, the recovery of an interrupted
// publish) before the change's claim is released. Every replica sharing
// the storage reads the records written since it last looked, so its
// index follows the others' publishes without reading the whole catalog.
//
// Records live under [layout.IndexChangesDir], one folder per UTC hour,
// named by their time to the nanosecond and a random suffix, so a listing
// of the recent hours, sorted bytewise, is in time order, and reading
// what changed since t costs what was written since t.
package changelog

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/storage"
)

const (
	hourFormat  = "2006010215"
	stampFormat = "20060102T150405.000000000Z"
	// maxRecord bounds one record read back: records are a few dozen
	// bytes; anything larger is not one jig wrote.
	maxRecord = 4 << 10
)

// Change is what one record says changed. Exactly one of Path (with
// Namespace), Preset and Rebuilt is set.
type Change struct {
	// Namespace and Path name a registry whose version list changed.
	Namespace string `json:"namespace,omitempty"`
	Path      string `json:"path,omitempty"`
	// Preset names a preset that was published.
	Preset string `json:"preset,omitempty"`
	// Rebuilt says a new index snapshot was written from a full read of
	// the storage: readers load it instead of following the records
	// before it.
	Rebuilt bool `json:"rebuilt,omitempty"`
}

// Valid reports whether c names one change with valid names.
func (c Change) Valid() bool {
	switch {
	case c.Rebuilt:
		return c.Namespace == "" && c.Path == "" && c.Preset == ""
	case c.Preset != "":
		return c.Namespace == "" && c.Path == "" && registry.ValidSegment(c.Preset)
	default:
		return registry.ValidNamespace(c.Namespace) && validPath(c.Path)
	}
}

func validPath(p string) bool {
	if p == "" {
		return false
	}
	for seg := range strings.SplitSeq(p, "/") {
		if !registry.ValidSegment(seg) {
			return false
		}
	}
	return true
}

// Record is one change read back: its key, when it was written (by the
// writer's clock) and what changed.
type Record struct {
	Key string
	At  time.Time
	Change
}

// Append writes c as a new record stamped now. Records are never
// overwritten: two writers in the same nanosecond get different names.
func Append(ctx context.Context, st storage.Storage, now time.Time, c Change) error {
	if !c.Valid() {
		return fmt.Errorf("changelog: invalid change %+v", c)
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	now = now.UTC()
	key := layout.IndexChangeBucket(now.Format(hourFormat)) + now.Format(stampFormat) + "-" + hex.EncodeToString(suffix[:]) + ".json"
	if err := st.Put(ctx, key, bytes.NewReader(b), int64(len(b))); err != nil {
		return fmt.Errorf("changelog: writing %s: %w", key, err)
	}
	return nil
}

// Since returns the records stamped at or after since, oldest first,
// reading only the hours from since's to now's. A record that cannot be
// read or parsed is skipped (it is not one jig wrote, or it was pruned
// meanwhile); a listing error fails.
func Since(ctx context.Context, st storage.Storage, since, now time.Time) ([]Record, error) {
	since, now = since.UTC(), now.UTC()
	buckets, err := storage.ListDir(ctx, st, layout.IndexChangesDir)
	if err != nil {
		return nil, fmt.Errorf("changelog: listing %s: %w", layout.IndexChangesDir, err)
	}
	from := layout.IndexChangeBucket(since.Truncate(time.Hour).Format(hourFormat))
	var out []Record
	for _, b := range buckets {
		if !strings.HasSuffix(b, "/") || b < from {
			continue
		}
		keys, err := storage.ListDir(ctx, st, b)
		if err != nil {
			return nil, fmt.Errorf("changelog: listing %s: %w", b, err)
		}
		for _, k := range keys {
			at, ok := stampOf(b, k)
			if !ok || at.Before(since) {
				continue
			}
			c, err := read(ctx, st, k)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				continue
			}
			out = append(out, Record{Key: k, At: at, Change: c})
		}
	}
	return out, nil
}

// stampOf parses the time of the record key k in the folder bucket.
func stampOf(bucket, k string) (time.Time, bool) {
	name, ok := strings.CutPrefix(k, bucket)
	if !ok || strings.Contains(name, "/") || len(name) < len(stampFormat) {
		return time.Time{}, false
	}
	at, err := time.Parse(stampFormat, name[:len(stampFormat)])
	return at, err == nil
}

func read(ctx context.Context, st storage.Storage, key string) (Change, error) {
	rc, _, err := st.Get(ctx, key)
	if err != nil {
		return Change{}, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxRecord+1))
	if err != nil {
		return Change{}, err
	}
	if len(b) > maxRecord {
		return Change{}, errors.New("changelog: record too large")
	}
	var c Change
	if err := json.Unmarshal(b, &c); err != nil {
		return Change{}, err
	}
	if !c.Valid() {
		return Change{}, errors.New("changelog: invalid record")
	}
	return c, nil
}

// Prune deletes the records of the hours wholly before before, and
// returns how many it deleted. Readers that fall further behind than the
// log keeps load the index snapshot instead.
func Prune(ctx context.Context, st storage.Storage, before time.Time) (int, error) {
	buckets, err := storage.ListDir(ctx, st, layout.IndexChangesDir)
	if err != nil {
		return 0, err
	}
	last := layout.IndexChangeBucket(before.UTC().Truncate(time.Hour).Format(hourFormat))
	n := 0
	for _, b := range buckets {
		if !strings.HasSuffix(b, "/") || b >= last {
			continue
		}
		keys, err := storage.ListDir(ctx, st, b)
		if err != nil {
			return n, err
		}
		for _, k := range keys {
			if strings.HasSuffix(k, "/") {
				continue
			}
			if err := st.Delete(ctx, k); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}
