package registryserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/jigkit/jig/internal/pkgarchive"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/internal/scratch"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/webhook"
)

// Messages and sizes of the publishing routes (DESIGN.md section 3.3).
const (
	uploadSuccessMessage     = "Registry uploaded successfully"
	presetSuccessMessage     = "Preset published successfully"
	multipartOverhead        = 1 << 20 // boundaries, part headers, the checksum field
	maxChecksumField         = 1 << 10
	defaultWebhookDrainBound = 10 * time.Second
)

// allowedArchiveTypes are the Content-Types accepted for the file part, as
// the reference accepts them. A part without a Content-Type is accepted.
var allowedArchiveTypes = []string{
	"application/gzip", "application/x-gzip", "application/x-tar",
	"application/x-compressed", "application/octet-stream", "application/x-gtar", "application/x-tgz",
}

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
	return pkgarchive.Limits{MaxUnpacked: l.MaxUnpackedSize, MaxEntries: l.MaxEntries, MaxPathLen: l.MaxPathLength}
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

// publishState is what the publishing routes use at run time.
type publishState struct {
	limits UploadLimits
	store  *publish.Store
	hooks  *webhook.Dispatcher // nil: no webhooks
	// scratch is this process's share of the upload folder.
	scratch *scratch.Dir
}

// setupPublish builds the publishing state; the webhook dispatcher it
// starts is drained by Close.
func (h *Handler) setupPublish(o publishOptions) error {
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
	h.Uploads = &core.UploadGate{Idle: idle, Total: total, Slots: make(chan struct{}, maxUploads)}
	p := &publishState{
		limits: o.limits.withDefaults(),
		store: publish.New(h.Store, publish.WithLogger(h.Log), publish.WithClock(h.Now),
			publish.WithClaimTTL(ttl), publish.WithOwner(sd.ID(), liveness)),
		scratch: sd,
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
		opts := []webhook.Option{webhook.WithLogger(h.Log)}
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
		p.hooks = d
	}
	h.pub = p
	return nil
}

// SetWebhooks replaces the webhooks that later publishes notify, at once
// and as a whole (deliveries already queued go to the hooks they were
// queued for). It is how a running server takes an edited webhooks.json;
// jig-server calls it on SIGHUP. The Handler must have been built with
// [WithWebhooks] (its list may be empty); otherwise SetWebhooks fails.
func (h *Handler) SetWebhooks(hooks []webhook.Hook) error {
	if h.pub.hooks == nil {
		return errors.New("registryserver: SetWebhooks on a Handler built without WithWebhooks")
	}
	h.pub.hooks.SetHooks(hooks)
	return nil
}

// postRegistry serves POST /registries: a multipart upload of a registry
// package (one file part, a checksum field). The steps and their error
// codes follow the reference (REFERENCE.md 2.4); see publish.go's package
// internal/publish for how the version becomes visible atomically.
func (h *Handler) postRegistry(c echo.Context) error {
	req := c.Request()
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	who := h.CallerOf(req)
	// The token is checked before an upload slot is taken or a byte of
	// the body is read: a token that can publish nowhere (unknown,
	// expired, read-only) cannot hold a slot. One auth.json decides the
	// whole request, even if it is reloaded meanwhile.
	publishTo, err := h.Upload(who)
	if err != nil {
		core.RefuseBody(c)
		return err
	}
	release, err := h.AcquireUpload(c)
	if err != nil {
		return err
	}
	defer release()
	lim := h.pub.limits
	req.Body = http.MaxBytesReader(c.Response(), req.Body, lim.MaxUploadSize+multipartOverhead)

	up, err := h.receiveUpload(req, lim)
	if up != nil {
		defer up.cleanup()
	}
	if err != nil {
		return err
	}
	ctx := req.Context()

	// The archive: structure and limits, then what registry.json says.
	ix, err := up.scan(lim)
	if err != nil {
		return refusal(pkgarchive.ArchiveRefusal(err))
	}
	head, err := ix.Head()
	if err != nil {
		return refusal(err)
	}

	// Who may publish there. A caller who may not read the namespace gets
	// the same answer whether it is gated or not declared (DESIGN 3).
	mark, err := publishTo(head.Namespace)
	if err != nil {
		return err
	}
	// A namespace served from an upstream holds only what the upstream
	// published: a local version there would shadow the upstream's.
	if h.mirror.UpstreamOf(head.Namespace) != nil {
		return core.NewAPIError(wire.CodeNamespaceNotAllowed,
			fmt.Sprintf("Namespace %s is mirrored from an upstream server: publish to the upstream instead", head.Namespace))
	}

	// What it contains: the checks jig publish runs before uploading.
	contents, err := ix.Check()
	if err != nil {
		return refusal(err)
	}
	// And the operator's own schema, the one GET /schemas serves.
	if err := h.CheckOperatorSchema(ctx, ix.Manifest); err != nil {
		return err
	}
	m, segs, declared := contents.Manifest, contents.Segments, contents.Declared

	// Make it visible.
	v := publish.Version{Namespace: m.Namespace, Segments: segs, Version: m.Version, Manifest: ix.Manifest}
	if err := v.CheckKeys(slices.Collect(maps.Keys(declared))); err != nil {
		return core.NewAPIError(wire.CodeUploadFailed, err.Error())
	}
	// Who signed it, before anything is stored: the signatures sign the
	// digest index, built from the package as jig publish builds it (the
	// publish then checks that what it stores has the same digests).
	if v.Index, err = ix.DigestIndex(contents); err != nil {
		return core.InternalError(err)
	}
	if v.Signatures, err = publish.CheckSignatures(v.Index, up.signatures, h.signers.Load().For(m.Namespace), h.Now()); err != nil {
		return core.SignatureRefusal(err)
	}
	err = h.pub.store.Publish(ctx, v, func(put publish.PutFunc) error {
		return up.walk(lim, func(name string) bool { return declared[name] },
			func(name string, size int64, body io.Reader) error { return put(ctx, name, size, body) })
	})
	// Whatever happened (a failed publish may have committed, then rolled
	// back), reads see the storage as it is now.
	h.RCache.Invalidate()
	if err != nil {
		return publishError(err, v)
	}
	h.Log.Info("registry published", zap.String("path", v.Path()), zap.String("token", mark),
		zap.Int("files", len(declared)), zap.Int64("bytes", up.size))
	h.index.RegistryPublished(ctx, m.Namespace, strings.Join(segs, "/"))
	if h.pub.hooks != nil {
		h.pub.hooks.Notify(webhook.Events(m.Name, m.Version, m.Namespace, v.Path(), h.Now())...)
	}
	return c.JSON(http.StatusCreated, wire.UploadResult{
		Name: m.Name, Version: m.Version, Namespace: m.Namespace, Message: uploadSuccessMessage, Path: v.Path(),
	})
}

// publishError maps an error of [publish.Store.Publish] of v.
func publishError(err error, v publish.Version) *core.APIError {
	switch {
	case errors.Is(err, publish.ErrVersionExists):
		return core.NewAPIError(wire.CodeVersionExists,
			fmt.Sprintf("Registry %s@%s already exists", strings.TrimSuffix(v.Prefix(), "/"), v.Version))
	case errors.Is(err, publish.ErrClaimLost):
		return &core.APIError{Code: wire.CodePublishInterrupted, Cause: err,
			Msg: "The publish was interrupted: it stalled and another server took it over. Nothing was published; publish again."}
	}
	return core.InternalError(err)
}

// upload is a received archive in a temporary file, and the signature
// fields that came with it.
type upload struct {
	f          *os.File
	size       int64
	signatures [][]byte
}

func (u *upload) cleanup() {
	name := u.f.Name()
	_ = u.f.Close()
	_ = os.Remove(name)
}

func (u *upload) scan(lim UploadLimits) (*pkgarchive.Index, error) {
	if _, err := u.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return pkgarchive.Scan(u.f, lim.archive())
}

func (u *upload) walk(lim UploadLimits, want func(string) bool, fn func(string, int64, io.Reader) error) error {
	if _, err := u.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return pkgarchive.Walk(u.f, lim.archive(), want, fn)
}

// receiveUpload reads the multipart body: the first file part is streamed
// to a temporary file while its SHA-256 is computed, the checksum field is
// read, and anything else is discarded. It checks the file part, its type,
// its size and the checksum. The returned upload, when not nil, must be
// cleaned up even if err is not nil.
func (h *Handler) receiveUpload(req *http.Request, lim UploadLimits) (*upload, error) {
	noFile := core.NewAPIError(wire.CodeMissingFile,
		"No file uploaded. Send multipart/form-data with a .tar.gz file part and a checksum field.")
	mr, err := req.MultipartReader()
	if err != nil {
		return nil, noFile
	}
	var (
		up       *upload
		sigs     [][]byte
		sum      []byte
		checksum string
		haveSum  bool
	)
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return up, bodyError(err, lim)
		}
		switch {
		case part.FormName() == wire.FormSignature:
			// Counted and bounded as they arrive; checked once the
			// package is known (publish.CheckSignatures).
			if len(sigs) == wire.MaxSignatures {
				part.Close()
				return up, core.NewAPIError(wire.CodeUploadFailed, fmt.Sprintf("Too many signature fields: at most %d", wire.MaxSignatures))
			}
			b, err := io.ReadAll(io.LimitReader(part, signing.MaxSignatureSize+1))
			if err != nil {
				return up, bodyError(err, lim)
			}
			if len(b) > signing.MaxSignatureSize {
				part.Close()
				return up, core.NewAPIError(wire.CodeSignatureInvalid, fmt.Sprintf("Signature %d is larger than %d bytes: it is not an SSH signature", len(sigs)+1, signing.MaxSignatureSize))
			}
			sigs = append(sigs, b)
		case part.FileName() != "" && up == nil:
			if !allowedArchiveType(part.Header.Get("Content-Type")) {
				part.Close()
				return up, core.NewAPIError(wire.CodeInvalidFileType, "File must be a tar.gz archive")
			}
			f, err := h.pub.scratch.CreateTemp(".tar.gz")
			if err != nil {
				return up, core.InternalError(fmt.Errorf("creating the upload file: %w", err))
			}
			up = &upload{f: f}
			hash := sha256.New()
			n, err := io.Copy(io.MultiWriter(f, hash), io.LimitReader(part, lim.MaxUploadSize+1))
			up.size = n
			if err != nil {
				return up, bodyError(err, lim)
			}
			if n > lim.MaxUploadSize {
				return up, tooLarge(lim)
			}
			sum = hash.Sum(nil)
		case part.FileName() == "" && part.FormName() == wire.FormChecksum:
			b, err := io.ReadAll(io.LimitReader(part, maxChecksumField))
			if err != nil {
				return up, bodyError(err, lim)
			}
			checksum, haveSum = strings.TrimSpace(string(b)), true
		default:
			if _, err := io.Copy(io.Discard, part); err != nil {
				return up, bodyError(err, lim)
			}
		}
		part.Close()
	}
	if up == nil {
		return nil, noFile
	}
	up.signatures = sigs
	if !haveSum || checksum == "" {
		return up, core.NewAPIError(wire.CodeMissingChecksum, "SHA256 checksum is required for upload verification")
	}
	want := hex.EncodeToString(sum)
	if subtle.ConstantTimeCompare([]byte(strings.ToLower(checksum)), []byte(want)) != 1 {
		return up, core.NewAPIError(wire.CodeChecksumMismatch,
			"Checksum verification failed: the checksum field must be the lowercase hex SHA-256 of the uploaded file")
	}
	return up, nil
}

func allowedArchiveType(ct string) bool {
	if strings.TrimSpace(ct) == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	for _, a := range allowedArchiveTypes {
		if mt == a {
			return true
		}
	}
	return false
}

// bodyError maps an error reading the request body.
func bodyError(err error, lim UploadLimits) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge(lim)
	}
	if ute, ok := errors.AsType[*core.UploadTimeoutError](err); ok {
		return core.UploadTimeout(ute)
	}
	if errors.Is(err, multipart.ErrMessageTooLarge) {
		return core.NewAPIError(wire.CodeUploadFailed, "Malformed multipart/form-data body: part headers too large")
	}
	return &core.APIError{Code: wire.CodeUploadFailed,
		Msg: "Malformed or interrupted multipart/form-data body", Cause: err}
}

func tooLarge(lim UploadLimits) error {
	return refusal(pkgarchive.TooLarge(lim.MaxUploadSize))
}

// refusal sends a package's [*pkgarchive.Refusal] as its wire error;
// any other error is a 500.
func refusal(err error) error {
	if r, ok := errors.AsType[*pkgarchive.Refusal](err); ok {
		return &core.APIError{Code: r.Code, Msg: r.Message, Cause: r.Unwrap()}
	}
	return core.InternalError(err)
}

// postPreset serves POST /presets: a preset.json body, admin token only.
// Versions are immutable; /presets/<name> serves the highest version.
func (h *Handler) postPreset(c echo.Context) error {
	req := c.Request()
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	who := h.CallerOf(req)
	if who.Sum == nil {
		return core.NewAPIError(wire.CodeUnauthorized, "Authentication required: publishing presets needs the admin token.")
	}
	if !who.Admin {
		return core.NewAPIError(wire.CodeInsufficientPerms, "Publishing presets requires the admin token")
	}
	if h.mirror.UpstreamOf(registry.PresetNamespace) != nil {
		core.RefuseBody(c)
		return core.NewAPIError(wire.CodeNamespaceNotAllowed, "Presets are mirrored from an upstream server: publish them to the upstream instead")
	}
	release, err := h.AcquireUpload(c)
	if err != nil {
		return err
	}
	defer release()
	data, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, pkgarchive.MaxPresetSize))
	if err != nil {
		if ute, ok := errors.AsType[*core.UploadTimeoutError](err); ok {
			return core.UploadTimeout(ute)
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return refusal(pkgarchive.PresetTooLarge())
		}
		return &core.APIError{Code: wire.CodeUploadFailed, Msg: "Could not read the request body", Cause: err}
	}
	if err := registry.ValidatePresetJSON(data); err != nil {
		if errors.Is(err, registry.ErrInvalidJSON) {
			return core.NewAPIError(wire.CodeUploadFailed, "preset.json is not valid JSON")
		}
		return refusal(pkgarchive.SchemaRefusal(err))
	}
	p, err := registry.ParsePreset(data)
	if err != nil {
		return core.NewAPIError(wire.CodeSchemaValidation, "Schema validation failed: "+err.Error())
	}
	if k := layout.PresetVersion(p.Name, p.Version); !storage.ValidKey(k) {
		return core.NewAPIError(wire.CodeUploadFailed, core.MsgInvalidKey)
	}
	err = h.pub.store.PublishPreset(req.Context(), p.Name, p.Version, data)
	if errors.Is(err, publish.ErrVersionExists) {
		return core.NewAPIError(wire.CodeVersionExists, fmt.Sprintf("Preset %s@%s already exists", p.Name, p.Version))
	}
	if err != nil {
		return core.InternalError(err)
	}
	h.Log.Info("preset published", zap.String("preset", p.Name), zap.String("version", p.Version))
	h.index.PresetPublished(req.Context(), p.Name)
	return c.JSON(http.StatusCreated, wire.UploadResult{
		Name: p.Name, Version: p.Version, Message: presetSuccessMessage, Path: strings.TrimSuffix(layout.PresetVersionDir(p.Name, p.Version), "/"),
	})
}
