package registryclient

import (
	"context"
	"time"

	"github.com/jigkit/jig/registry"
)

// Files downloaded ahead (see [Sources.ManifestDigestAhead]): a latest
// manifest names its version only once it is in, and checking it against
// the version's digest index costs one more round trip; the files it
// names are downloaded during that round trip instead of after it. They
// are verified, as every file is, when [Client.File] asks for them.

// aheadFile is one file download started ahead of its File call.
type aheadFile struct {
	done chan struct{}
	body []byte
	err  error
}

// aheadTTL is how long a download started ahead waits for its File call;
// then it is dropped.
const aheadTTL = 2 * time.Minute

// maxAhead bounds the downloads started ahead that run at once, per client.
const maxAhead = 16

func aheadKey(ref, path string) string { return ref + "\x00" + path }

// startAhead starts downloading paths of id@version (id unpinned or
// pinned) unless the version's digest index is at hand already (then the
// cache or one later round serves them) or the client is offline.
func (c *Client) startAhead(ctx context.Context, id registry.ID, version string, paths []string) {
	if len(paths) == 0 || c.opts.mode == Offline || c.memIndex(c.versionRef(id, version)) != nil {
		return
	}
	if x, _ := c.cachedIndexBytes(id, version); x != nil {
		return
	}
	pid := id.WithVersion(version)
	pid = pid.Bare()
	ref := c.versionRef(pid, version)
	// The downloads outlive the call that started them (the resolver's
	// round ends before the files are asked for), not its deadline.
	actx := context.WithoutCancel(ctx)
	cancel := context.CancelFunc(func() {})
	if d, ok := ctx.Deadline(); ok {
		actx, cancel = context.WithDeadline(actx, d)
	}
	var started []*aheadFile
	c.aheadMu.Lock()
	if c.ahead == nil {
		c.ahead = map[string]*aheadFile{}
		c.aheadSem = make(chan struct{}, maxAhead)
	}
	for _, p := range paths {
		p = registry.NormalizeFilePath(p)
		if !registry.ValidFilePath(p) {
			continue
		}
		key := aheadKey(ref, p)
		if c.ahead[key] != nil {
			continue
		}
		a := &aheadFile{done: make(chan struct{})}
		c.ahead[key] = a
		started = append(started, a)
		go func() {
			defer close(a.done)
			c.aheadSem <- struct{}{}
			defer func() { <-c.aheadSem }()
			a.body, a.err = c.fetchFile(actx, pid, p)
			time.AfterFunc(aheadTTL, func() { c.dropAhead(key, a) })
		}()
	}
	c.aheadMu.Unlock()
	if len(started) == 0 {
		cancel()
		return
	}
	go func() {
		for _, a := range started {
			<-a.done
		}
		cancel()
	}()
}

// takeAhead returns the body of path of id (pinned) when a download of it
// was started ahead and succeeded; it waits for it to finish. A failed one
// reports false, so the caller downloads the file again and reports its
// own error.
func (c *Client) takeAhead(ctx context.Context, id registry.ID, path string) ([]byte, bool) {
	key := aheadKey(c.versionRef(id, id.Version), path)
	c.aheadMu.Lock()
	a := c.ahead[key]
	delete(c.ahead, key)
	c.aheadMu.Unlock()
	if a == nil {
		return nil, false
	}
	select {
	case <-a.done:
		return a.body, a.err == nil
	case <-ctx.Done():
		return nil, false
	}
}

func (c *Client) dropAhead(key string, a *aheadFile) {
	c.aheadMu.Lock()
	defer c.aheadMu.Unlock()
	if c.ahead[key] == a {
		delete(c.ahead, key)
	}
}
