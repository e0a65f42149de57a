package servercli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/webhook"
)

// reloadable is something jig-server reloads on SIGHUP and when its
// files change: the TLS certificate, auth.json and webhooks.json.
type reloadable interface {
	// changed reports whether the files differ from what was loaded
	// (or last tried).
	changed() bool
	// reload loads the files again; a failure is logged and what was in
	// force stays.
	reload(why string)
}

// notifyHUP starts catching SIGHUP, so that from then on it never stops
// the server (without a handler, it ends the process without a word). The
// caller passes the channel to [watchSignals] and stops it with
// signal.Stop.
func notifyHUP() chan os.Signal {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	return hup
}

// watchSignals reloads every r on each SIGHUP received on hup until ctx
// ends.
func watchSignals(ctx context.Context, hup <-chan os.Signal, log *zap.Logger, rs ...reloadable) {
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				log.Info("SIGHUP: reloading the configuration files")
				for _, r := range rs {
					r.reload("SIGHUP")
				}
			}
		}
	}()
}

// watchFiles reloads r every interval when its files changed, until ctx
// ends. An interval of 0 does nothing.
func watchFiles(ctx context.Context, r reloadable, interval time.Duration) {
	if interval <= 0 {
		return
	}
	ticker := time.NewTicker(interval)
	go func() {
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
				if r.changed() {
					r.reload("file change")
				}
			}
		}
	}()
}

// configReloader reloads auth.json and webhooks.json into a running
// handler. Both files are read and checked before either is applied: when
// one does not load (malformed, a key twice, gone), the error is logged
// and both keep what was in force.
type configReloader struct {
	authPath, hooksPath string // "" when not configured
	h                   *registryserver.Handler
	log                 *zap.Logger

	mu   sync.Mutex // serialises reloads
	seen [2]fileStamp
}

// newConfigReloader notes the files' stamps; call it before the files are
// first loaded, so that a change made meanwhile is not missed, and set h
// once the handler is built.
func newConfigReloader(c *CLI, log *zap.Logger) *configReloader {
	r := &configReloader{authPath: c.AuthConfigPath, hooksPath: c.WebhookConfigPath, log: log}
	r.seen = r.stamps()
	return r
}

// stamps returns the current stamps of both files (zero for a file that
// is not configured or cannot be read).
func (r *configReloader) stamps() [2]fileStamp {
	var st [2]fileStamp
	for i, p := range []string{r.authPath, r.hooksPath} {
		if p != "" {
			st[i], _ = stampOf(p)
		}
	}
	return st
}

func (r *configReloader) changed() bool {
	st := r.stamps()
	r.mu.Lock()
	defer r.mu.Unlock()
	return st != r.seen
}

func (r *configReloader) reload(why string) {
	if r.authPath == "" && r.hooksPath == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// What is tried now is not tried again by the file check until it
	// changes: a bad file is logged once per change.
	r.seen = r.stamps()
	var (
		auth    *registryserver.AuthConfig
		hooks   []webhook.Hook
		authErr error
		hookErr error
	)
	if r.authPath != "" {
		auth, authErr = registryserver.LoadAuthConfig(r.authPath)
	}
	if r.hooksPath != "" {
		hooks, hookErr = loadWebhooks(r.hooksPath, r.log)
	}
	if err := errors.Join(authErr, hookErr); err != nil {
		r.log.Error("Reloading auth.json and webhooks.json failed; still using the previous ones", zap.String("trigger", why), zap.Error(err))
		return
	}
	if r.authPath != "" {
		r.h.SetAuth(auth)
		warnInClear(r.log, auth)
	}
	if r.hooksPath != "" {
		if err := r.h.SetWebhooks(hooks); err != nil {
			r.log.Error("Reloading webhooks.json failed", zap.String("trigger", why), zap.Error(err))
			return
		}
	}
	r.log.Info("Reloaded auth.json and webhooks.json", zap.String("trigger", why),
		zap.String("auth", r.authPath), zap.String("webhooks", r.hooksPath))
}

// warnInClear logs, once per load of auth.json, the tokens it holds in
// clear ("token" rather than "tokenSha256"): they keep working. The line
// names them by id only, never by token or namespace.
func warnInClear(log *zap.Logger, a *registryserver.AuthConfig) {
	var ids []string
	for _, ns := range a.Describe(time.Now()) {
		for _, t := range ns.Tokens {
			if t.InClear && !slices.Contains(ids, t.ID) {
				ids = append(ids, t.ID)
			}
		}
	}
	if len(ids) > 0 {
		log.Warn(`auth.json holds tokens in clear; they keep working, but replace each "token" with "tokenSha256" (jig-server auth check prints the values) or issue new ones with jig-server token create`,
			zap.Strings("tokenIds", ids))
	}
}
