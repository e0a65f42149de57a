// Package publishing serves jig-server's uploads: POST /registries (a
// registry package, checked for structure, limits, schema, rights and
// signatures, then stored with the publish protocol of package
// internal/publish) and POST /presets. The router builds it over the
// shared core and registers its routes.
package publishing

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/jigkit/jig/internal/pkgarchive"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/internal/scratch"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/webhook"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
)

// Messages and sizes of the publishing routes (DESIGN.md section 3.3).
const (
	uploadSuccessMessage = "Registry uploaded successfully"
	presetSuccessMessage = "Preset published successfully"
	multipartOverhead    = 1 << 20 // boundaries, part headers, the checksum field
	maxChecksumField     = 1 << 10
)

// State is what the publishing routes share with the router, which builds
// it: the publish store, the upload limits, the webhooks and the upload
// folder.
type State struct {
	Limits pkgarchive.Limits
	Store  *publish.Store
	Hooks  *webhook.Dispatcher // nil: no webhooks
	// Scratch is this process's share of the upload folder.
	Scratch *scratch.Dir
}

// Publishing is the publishing routes. Build it with [New].
type Publishing struct {
	*core.Core
	pub    *State
	mirror Mirrored
	index  Published
}

// Mirrored says which namespaces are served from an upstream: nobody
// publishes into them here.
type Mirrored interface {
	Mirrored(ns string) bool
}

// Published is told what was published: the search index.
type Published interface {
	RegistryPublished(ctx context.Context, ns, path string)
	PresetPublished(ctx context.Context, name string)
}

// New returns the publishing routes over c and the state the router built.
func New(c *core.Core, pub *State, mirror Mirrored, index Published) *Publishing {
	return &Publishing{Core: c, pub: pub, mirror: mirror, index: index}
}

// allowedArchiveTypes are the Content-Types accepted for the file part, as
// the reference accepts them. A part without a Content-Type is accepted.
var allowedArchiveTypes = []string{
	"application/gzip", "application/x-gzip", "application/x-tar",
	"application/x-compressed", "application/octet-stream", "application/x-gtar", "application/x-tgz",
}

// PostRegistry serves POST /registries: a multipart upload of a registry
// package (one file part, a checksum field). The steps and their error
// codes follow the reference (REFERENCE.md 2.4); see publish.go's package
// internal/publish for how the version becomes visible atomically. Every
// upload whose token may publish somewhere is recorded in the audit log,
// published or refused; a token refused before the body is read is a
// failed token check.
func (h *Publishing) PostRegistry(c echo.Context) error {
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
	return h.Audited(c, who, state.Event{Action: core.ActionPublish}, func(ev *state.Event) error {
		return h.postRegistry(c, who.Identity, publishTo, ev)
	})
}

// postRegistry receives, checks and publishes an upload whose token may
// publish somewhere, filling in ev (namespace, target, detail) as they
// are known.
func (h *Publishing) postRegistry(c echo.Context, id *core.Identity, publishTo func(ns string) (string, error), ev *state.Event) error {
	req := c.Request()
	release, err := h.AcquireUpload(c)
	if err != nil {
		return err
	}
	defer release()
	lim := h.pub.Limits
	req.Body = http.MaxBytesReader(c.Response(), req.Body, lim.MaxUpload+multipartOverhead)

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
	ev.Namespace, ev.Target = head.Namespace, cmp.Or(head.Path, head.Name)+"@"+head.Version

	// Who may publish there. A caller who may not read the namespace gets
	// the same answer whether it is gated or not declared (DESIGN 3).
	mark, err := publishTo(head.Namespace)
	if err != nil {
		return err
	}
	ev.Detail = publishDetail(mark, nil)
	// A namespace served from an upstream holds only what the upstream
	// published: a local version there would shadow the upstream's.
	if h.mirror.Mirrored(head.Namespace) {
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
	ev.Target = strings.Join(segs, "/") + "@" + m.Version

	// Make it visible.
	v := publish.Version{Namespace: m.Namespace, Segments: segs, Version: m.Version, Manifest: ix.Manifest}
	if id != nil {
		// Trusted publishing: the version keeps who published it.
		if v.Publisher, err = json.Marshal(id); err != nil {
			return core.InternalError(err)
		}
	}
	if err := v.CheckKeys(slices.Collect(maps.Keys(declared))); err != nil {
		return core.NewAPIError(wire.CodeUploadFailed, err.Error())
	}
	// Who signed it, before anything is stored: the signatures sign the
	// digest index, built from the package as jig publish builds it (the
	// publish then checks that what it stores has the same digests).
	if v.Index, err = ix.DigestIndex(contents); err != nil {
		return core.InternalError(err)
	}
	if v.Signatures, err = publish.CheckSignatures(v.Index, up.signatures, h.SignersInForce().For(m.Namespace), h.Now()); err != nil {
		return core.SignatureRefusal(err)
	}
	ev.Detail = publishDetail(mark, v.Signatures)
	err = h.pub.Store.Publish(ctx, v, func(put publish.PutFunc) error {
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
	if h.pub.Hooks != nil {
		h.pub.Hooks.Notify(webhook.Events(m.Name, m.Version, m.Namespace, v.Path(), h.Now())...)
	}
	return c.JSON(http.StatusCreated, wire.UploadResult{
		Name: m.Name, Version: m.Version, Namespace: m.Namespace, Message: uploadSuccessMessage, Path: v.Path(),
	})
}

// publishDetail is the audit log's detail of a publish: the mark
// recorded with the version and who signed it (sigs is the signatures
// document stored with it, nil for none).
func publishDetail(mark string, sigs []byte) string {
	var parts []string
	if mark != "" {
		parts = append(parts, "mark "+strconv.Quote(mark))
	}
	if signers := publish.Signers(sigs); len(signers) > 0 {
		parts = append(parts, "signed by "+strings.Join(signers, ", "))
	}
	return strings.Join(parts, "; ")
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

func (u *upload) scan(lim pkgarchive.Limits) (*pkgarchive.Index, error) {
	r, err := u.reader()
	if err != nil {
		return nil, err
	}
	return pkgarchive.Scan(r, lim)
}

func (u *upload) walk(lim pkgarchive.Limits, want func(string) bool, fn func(string, int64, io.Reader) error) error {
	r, err := u.reader()
	if err != nil {
		return err
	}
	return pkgarchive.Walk(r, lim, want, fn)
}

// uploadReadSize is the size of the reads of the upload file: the gzip
// reader's own buffer would read it 4 KiB at a time.
const uploadReadSize = 64 << 10

// reader returns a reader of the upload file from its start.
func (u *upload) reader() (io.Reader, error) {
	if _, err := u.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return bufio.NewReaderSize(u.f, uploadReadSize), nil
}

// receiveUpload reads the multipart body: the first file part is streamed
// to a temporary file while its SHA-256 is computed, the checksum field is
// read, and anything else is discarded. It checks the file part, its type,
// its size and the checksum. The returned upload, when not nil, must be
// cleaned up even if err is not nil.
func (h *Publishing) receiveUpload(req *http.Request, lim pkgarchive.Limits) (*upload, error) {
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
			f, err := h.pub.Scratch.CreateTemp(".tar.gz")
			if err != nil {
				return up, core.InternalError(fmt.Errorf("creating the upload file: %w", err))
			}
			up = &upload{f: f}
			hash := sha256.New()
			n, err := io.Copy(io.MultiWriter(f, hash), io.LimitReader(part, lim.MaxUpload+1))
			up.size = n
			if err != nil {
				return up, bodyError(err, lim)
			}
			if n > lim.MaxUpload {
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
func bodyError(err error, lim pkgarchive.Limits) error {
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

func tooLarge(lim pkgarchive.Limits) error {
	return refusal(pkgarchive.TooLarge(lim.MaxUpload))
}

// refusal sends a package's [*pkgarchive.Refusal] as its wire error;
// any other error is a 500.
func refusal(err error) error {
	if r, ok := errors.AsType[*pkgarchive.Refusal](err); ok {
		return &core.APIError{Code: r.Code, Msg: r.Message, Cause: r.Unwrap()}
	}
	return core.InternalError(err)
}

// PostPreset serves POST /presets: a preset.json body, admin token only.
// Versions are immutable; /presets/<name> serves the highest version.
// Every upload with the admin token is recorded in the audit log.
func (h *Publishing) PostPreset(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	who := h.CallerOf(c.Request())
	if err := core.RequireAdmin(who, "publishing presets"); err != nil {
		return err
	}
	return h.Audited(c, who, state.Event{Action: core.ActionPublishPreset, Namespace: registry.PresetNamespace}, func(ev *state.Event) error {
		return h.postPreset(c, ev)
	})
}

// postPreset receives, checks and publishes a preset upload of the admin
// token, filling in ev's target once it is known.
func (h *Publishing) postPreset(c echo.Context, ev *state.Event) error {
	req := c.Request()
	if h.mirror.Mirrored(registry.PresetNamespace) {
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
	ev.Target = p.Name + "@" + p.Version
	if k := layout.PresetVersion(p.Name, p.Version); !storage.ValidKey(k) {
		return core.NewAPIError(wire.CodeUploadFailed, core.MsgInvalidKey)
	}
	err = h.pub.Store.PublishPreset(req.Context(), p.Name, p.Version, data)
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
