package registryserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jigkit/jig/registryserver/internal/publishing"

	"github.com/jigkit/jig/internal/pkgarchive"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/internal/scratch"
	"github.com/jigkit/jig/registryserver/webhook"
)

// defaultWebhookDrainBound bounds how long Close waits for webhook deliveries.
const (
	defaultWebhookDrainBound = 10 * time.Second
)

// UploadLimits bound what POST /registries accepts. A zero field means its
// default.
type UploadLimits struct {
	// MaxUploadSize is the largest uploaded archive in bytes; larger
	// uploads get 413. The default is 100 MiB.
	MaxUploadSize int64
	// MaxUnpackedSize is the most bytes of file content an archive may
	// unpack to. The default is 100 MiB.
	MaxUnpackedSize int64
	// MaxEntries is the most tar entries an archive may hold. The default
	// is 10,000.
	MaxEntries int
	// MaxPathLength is the longest entry name in bytes. The default is 512.
	MaxPathLength int
}

// DefaultUploadLimits returns the limits of DESIGN.md section 3.3.
func DefaultUploadLimits() UploadLimits {
	return UploadLimits{
		MaxUploadSize:   pkgarchive.DefaultMaxUpload,
		MaxUnpackedSize: pkgarchive.DefaultMaxUnpacked,
		MaxEntries:      pkgarchive.DefaultMaxEntries,
		MaxPathLength:   pkgarchive.DefaultMaxPathLen,
	}
}

func (l UploadLimits) withDefaults() UploadLimits {
	d := DefaultUploadLimits()
	if l.MaxUploadSize <= 0 {
		l.MaxUploadSize = d.MaxUploadSize
	}
	if l.MaxUnpackedSize <= 0 {
		l.MaxUnpackedSize = d.MaxUnpackedSize
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = d.MaxEntries
	}
	if l.MaxPathLength <= 0 {
		l.MaxPathLength = d.MaxPathLength
	}
	return l
}

func (l UploadLimits) archive() pkgarchive.Limits {
	return pkgarchive.Limits{MaxUpload: l.MaxUploadSize, MaxUnpacked: l.MaxUnpackedSize, MaxEntries: l.MaxEntries, MaxPathLen: l.MaxPathLength}
}

// publishOptions are the options of the publishing routes.
type publishOptions struct {
	limits        UploadLimits
	hooks         []webhook.Hook
	hookOpts      []webhook.Option
	hooksSet      bool
	webhookDrain  time.Duration
	tempDir       string
	idleTimeout   time.Duration
	uploadTimeout time.Duration
	maxUploads    int
	claimTTL      time.Duration
}

// WithUploadLimits sets the limits of POST /registries. The default is
// [DefaultUploadLimits].
func WithUploadLimits(l UploadLimits) Option {
	return func(o *options) error {
		if l.MaxUploadSize < 0 || l.MaxUnpackedSize < 0 || l.MaxEntries < 0 || l.MaxPathLength < 0 {
			return errors.New("upload limits must not be negative")
		}
		o.publish.limits = l
		return nil
	}
}

// WithWebhooks sends the events of every publish to hooks (typically
// [webhook.Load]'s Webhooks) through a [webhook.Dispatcher] that the
// Handler owns: it is built with the Handler's logger and opts, and
// drained by [Handler.Close] (see [WithWebhookDrainTimeout]).
// [Handler.SetWebhooks] replaces the hooks later; hooks may be empty. The
// default is no webhooks.
func WithWebhooks(hooks []webhook.Hook, opts ...webhook.Option) Option {
	return func(o *options) error {
		o.publish.hooks = append([]webhook.Hook(nil), hooks...)
		o.publish.hookOpts = opts
		o.publish.hooksSet = true
		return nil
	}
}

// WithWebhookDrainTimeout bounds how long [Handler.Close] waits for queued
// webhook deliveries. The default is 10 s.
func WithWebhookDrainTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("webhook drain timeout must be positive, got %s", d)
		}
		o.publish.webhookDrain = d
		return nil
	}
}

// WithUploadTempDir sets the folder uploads are streamed to before they
// are checked. The Handler owns it: it creates it (mode 0700) on the first
// upload and refuses one that another user owns or may write to. Each
// upload file is held under the process's flock(2) lock while it is
// received, and the Handler removes the upload files of jig-server
// processes that died (a kill -9 halfway through an upload) when it is
// built and every claim TTL (see [WithPublishClaimTTL]). Several processes
// may share the folder. The default is <root>/.jig/uploads for a storage on
// disk ([storage.ScratchDirer]), which no storage key can reach, and
// jig-server-uploads-<uid> in the system's temporary directory otherwise.
func WithUploadTempDir(dir string) Option {
	return func(o *options) error {
		if strings.TrimSpace(dir) == "" {
			return errors.New("upload folder is empty; name a directory of the server's own, or leave it unset for the default")
		}
		o.publish.tempDir = dir
		return nil
	}
}

// WithPublishClaimTTL sets how long the claim of a publish in progress
// stays valid without a heartbeat. A publish refreshes its claim every
// third of ttl; a claim whose publisher is gone can be taken over (and
// the version published again) once its heartbeat is older than ttl, or at
// once when its publisher was a jig-server process on this host that died
// (its lock in the upload folder is free). The Handler also looks for such
// claims every ttl and removes what their publishes left. Replicas sharing
// a storage must use the same ttl, and their clocks must agree to well
// within it. The default is [DefaultPublishClaimTTL].
func WithPublishClaimTTL(ttl time.Duration) Option {
	return func(o *options) error {
		if ttl < time.Second {
			return fmt.Errorf("publish claim TTL must be at least 1s, got %s", ttl)
		}
		o.publish.claimTTL = ttl
		return nil
	}
}

// DefaultPublishClaimTTL is the default of [WithPublishClaimTTL].
const DefaultPublishClaimTTL = publish.DefaultClaimTTL

// setupPublish builds the publishing state; the webhook dispatcher it
// starts is drained by Close.
func (h *Handler) setupPublish(o publishOptions, logKey string) error {
	idle, total, maxUploads := o.idleTimeout, o.uploadTimeout, o.maxUploads
	if idle <= 0 {
		idle = DefaultUploadIdleTimeout
	}
	if total <= 0 {
		total = DefaultUploadTimeout
	}
	if maxUploads <= 0 {
		maxUploads = DefaultMaxConcurrentUploads
	}
	ttl := o.claimTTL
	if ttl <= 0 {
		ttl = DefaultPublishClaimTTL
	}
	dir, err := h.uploadDir(o.tempDir)
	if err != nil {
		return err
	}
	sd, err := scratch.Open(dir)
	if err != nil {
		return fmt.Errorf("upload folder: %w", err)
	}
	liveness := func(owner string) publish.Liveness {
		switch sd.Owner(owner) {
		case scratch.Dead:
			return publish.LivenessDead
		case scratch.Alive:
			return publish.LivenessAlive
		}
		return publish.LivenessUnknown
	}
	h.core.Uploads = &core.UploadGate{Idle: idle, Total: total, Slots: make(chan struct{}, maxUploads)}
	popts := []publish.Option{publish.WithLogger(h.core.Log), publish.WithClock(h.core.Now),
		publish.WithClaimTTL(ttl), publish.WithOwner(sd.ID(), liveness)}
	if logKey != "" {
		signer, vkey, err := publish.NewLogSigner(logKey)
		if err != nil {
			return err
		}
		popts = append(popts, publish.WithLog(signer))
		h.logVerifier = vkey
	}
	p := &publishing.State{
		Limits:  o.limits.withDefaults().archive(),
		Store:   publish.New(h.core.Store, popts...),
		Scratch: sd,
	}
	h.closers = append(h.closers, sd.Close)
	// Uploads of processes that died go at once: they are local files,
	// not storage keys. Claims are recovered by the loop below and, in
	// jig-server, once the port is bound ([Handler.Recover]).
	h.sweepUploads(p)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go h.recoverLoop(p, ttl, stop, stopped)
	h.closers = append(h.closers, func() error { close(stop); <-stopped; return nil })
	// A dispatcher whenever WithWebhooks was given, even with no hooks,
	// so that [Handler.SetWebhooks] can add some later.
	if o.hooksSet {
		opts := []webhook.Option{webhook.WithLogger(h.core.Log)}
		if h.ops != nil && h.ops.Registerer() != nil {
			opts = append(opts, webhook.WithRegisterer(h.ops.Registerer()))
		}
		opts = append(opts, o.hookOpts...)
		d, err := webhook.New(o.hooks, opts...)
		if err != nil {
			return err
		}
		drain := o.webhookDrain
		if drain <= 0 {
			drain = defaultWebhookDrainBound
		}
		h.closers = append(h.closers, func() error {
			// Close is not on a request path: the drain has its own bound.
			ctx, cancel := context.WithTimeout(context.Background(), drain)
			defer cancel()
			if err := d.Close(ctx); err != nil {
				return fmt.Errorf("webhooks: pending deliveries dropped: %w", err)
			}
			return nil
		})
		p.Hooks = d
	}
	h.pub = p
	return nil
}

// SetWebhooks replaces the webhooks that later publishes notify, at once
// and as a whole (deliveries already queued go to the hooks they were
// queued for). It is how a running server takes an edited webhooks.json;
// jig-server calls it on SIGHUP. The Handler must have been built with
// [WithWebhooks] (its list may be empty); otherwise SetWebhooks fails.
// The audit log records the reload, done by the operator (counts, never
// a URL or a secret).
func (h *Handler) SetWebhooks(hooks []webhook.Hook) error {
	if h.pub.Hooks == nil {
		return errors.New("registryserver: SetWebhooks on a Handler built without WithWebhooks")
	}
	h.pub.Hooks.SetHooks(hooks)
	h.auditReload(reloadWebhooks, nil, webhooksSummary(hooks))
	return nil
}
