package servercli

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/jigkit/jig/registryserver"
)

// upstreamsReloadTimeout bounds the storage checks of a reloaded
// upstreams file (whether a namespace it adds holds registries published
// here).
const upstreamsReloadTimeout = 30 * time.Second

// upstreamsReloader reloads UPSTREAMS_CONFIG_PATH into a running mirror on
// SIGHUP and when the file changes. A file that does not load, or that
// serves a namespace published on this server, is logged and the previous
// one stays in force.
type upstreamsReloader struct {
	path string
	h    *registryserver.Handler
	log  *zap.Logger
	ctx  context.Context // the server's: a reload stops with it

	mu   sync.Mutex // serialises reloads
	seen fileStamp
}

// newUpstreamsReloader notes the file's stamp; call it before the file is
// first loaded, and set h once the handler is built.
func newUpstreamsReloader(ctx context.Context, path string, log *zap.Logger) *upstreamsReloader {
	r := &upstreamsReloader{path: path, log: log, ctx: ctx}
	r.seen, _ = stampOf(path)
	return r
}

func (r *upstreamsReloader) changed() bool {
	st, _ := stampOf(r.path)
	r.mu.Lock()
	defer r.mu.Unlock()
	return st != r.seen
}

func (r *upstreamsReloader) reload(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// What is tried now is not tried again by the file check until it
	// changes: a bad file is logged once per change.
	r.seen, _ = stampOf(r.path)
	c, err := registryserver.LoadUpstreams(r.path)
	if err == nil {
		ctx, cancel := context.WithTimeout(r.ctx, upstreamsReloadTimeout)
		err = r.h.SetUpstreams(ctx, c)
		cancel()
	}
	if err != nil {
		r.log.Error("Reloading the upstreams file failed; still using the previous one", zap.String("trigger", why),
			zap.String("path", r.path), zap.Error(err))
		return
	}
	r.log.Info("Reloaded the upstreams file", zap.String("trigger", why), zap.String("path", r.path),
		zap.Strings("namespaces", c.Namespaces()))
}
