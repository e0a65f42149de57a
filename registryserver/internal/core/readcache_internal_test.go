package core

import (
	"sync"
	"testing"
	"time"
)

// TestReadCacheStatExtendsWhileRead: a Stat of an object the cache holds
// whole extends its expiry while other requests check that expiry (as a
// manifest's commit check does while another request serves it). Run
// with -race; the expiry was once a plain time.Time written under the
// lock and read outside it.
func TestReadCacheStatExtendsWhileRead(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	rc := NewReadCache(time.Minute, func() time.Time { return now })
	const key = "@main/runtimes/node/1.0.0/registry.json"
	full := &objectState{etag: `"e1"`, rep: &representation{}}
	rc.rememberObject(rc.gen.Load(), key, full)

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				rc.rememberObject(rc.gen.Load(), key, &objectState{etag: `"e1"`, statOnly: true})
			}
		})
		wg.Go(func() {
			for range 200 {
				if o := rc.object(key); o != full {
					t.Errorf("object(%s) = %p, want the full state %p kept", key, o, full)
					return
				}
			}
		})
	}
	wg.Wait()

	now = now.Add(2 * time.Minute)
	if o := rc.object(key); o != nil {
		t.Errorf("object(%s) after its TTL = %p, want nil", key, o)
	}
}
