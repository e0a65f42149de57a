package mirror

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/pkgarchive"
	"github.com/jigkit/jig/internal/redact"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/upstream"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
)

// ensureVersion makes sure the version is in the storage, pulling it from
// upstream u when it is not, for the read in c. done is false when the
// read goes on as for any namespace: the version is stored, or the
// upstream does not have it (the storage then answers 404). A pull this
// read started is recorded in the audit log as done by its caller
// ([Mirror.auditPull]).
func (h *Mirror) ensureVersion(c echo.Context, ns, path, version string, u *upstream.Upstream) (done bool, err error) {
	ctx := c.Request().Context()
	mi := h.mirror
	key := layout.Manifest(ns, path, version)
	if _, err := h.CommitOf(ctx, key); err == nil {
		mi.hits.WithLabelValues(u.Label()).Inc()
		return false, nil
	} else if !errors.Is(err, storage.ErrNotFound) {
		return true, core.InternalError(err)
	}
	mi.misses.WithLabelValues(u.Label()).Inc()
	if r := h.refusedByPolicy(key); r != nil {
		return true, r.apiError()
	}
	if err = mi.recentFailure(key, h.Now()); err == nil {
		// pulled is set when this request's pull asked the upstream, and
		// signers to who signed what it stored.
		var (
			pulled  bool
			signers []string
		)
		// The pull is shared by every request for the version and
		// outlives the one that started it (its client may hang up).
		_, err, _ = mi.pulls.Do(key, func() (any, error) {
			pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pullTimeout)
			defer cancel()
			// A pull that ended between this request's look at the
			// storage and now has stored the version: fetch nothing.
			if _, err := storage.Fresh(h.Store).Stat(pctx, key); err == nil {
				return nil, nil
			}
			if err := mi.recentFailure(key, h.Now()); err != nil {
				return nil, err
			}
			var err error
			select {
			case mi.slots <- struct{}{}:
				pulled = true
				signers, err = h.pullVersion(pctx, ns, path, version, u)
				<-mi.slots
			case <-pctx.Done():
				err = fmt.Errorf("waiting for one of the %d pulls running to end: %w", maxConcurrentPulls, pctx.Err())
			}
			if err != nil && !errors.Is(err, errUpstreamNotFound) && !isPolicyRefusal(err) {
				h.Log.Warn("pulling from upstream failed; nothing was stored", zap.String("upstream", u.Label()),
					zap.String("version", ns+"/"+path+"@"+version), zap.Error(err))
			}
			mi.mu.Lock()
			if err != nil && !isPolicyRefusal(err) { // a refusal is in mi.verdicts
				if len(mi.failed) >= maxMirrorTracked {
					clear(mi.failed)
				}
				mi.failed[key] = pullFailure{at: h.Now(), err: err}
			} else {
				delete(mi.failed, key)
			}
			mi.mu.Unlock()
			return nil, err
		})
		if pulled {
			h.auditPull(c, ns, path+"@"+version, u, signers, err)
		}
	}
	switch {
	case err == nil:
		h.RCache.Invalidate()
		h.index.RegistryPublished(ctx, ns, path)
		return false, nil
	case errors.Is(err, errUpstreamNotFound):
		return false, nil
	}
	if r, ok := errors.AsType[*policyRefusal](err); ok {
		return true, r.apiError()
	}
	return true, upstreamUnavailable(ns+"/"+path+"@"+version, err)
}

// auditPull records a pull from upstream u of target ("<path>@<version>"
// or a preset's "<name>@<version>") in namespace ns, started by the read
// in c, in the audit log as its caller's: what was stored (signers: who
// signed it), or what the answer was refused for (the signing policy, a
// failed verification). A pull that fetched nothing (the upstream does
// not have it, did not answer, or answered 5xx) is not recorded: nothing
// was written, and reads of missing versions cannot fill the log.
func (h *Mirror) auditPull(c echo.Context, ns, target string, u *upstream.Upstream, signers []string, err error) {
	if errors.Is(err, errUpstreamNotFound) || unanswered(err) {
		return
	}
	detail := "from " + redact.URL(u.Label())
	if len(signers) > 0 {
		detail += "; signed by " + strings.Join(signers, ", ")
	}
	outcome := core.OutcomeOK
	if err != nil {
		outcome = string(wire.CodeUpstreamUnavailable)
		if isPolicyRefusal(err) {
			outcome = string(wire.CodeSignatureInvalid)
		} else if ae, ok := errors.AsType[*core.APIError](err); ok {
			outcome = string(ae.Code)
		}
		detail += ": " + redact.Text(err.Error(), []string{u.Token})
	}
	h.Audit(c, h.CallerOf(c.Request()), state.Event{Action: core.ActionMirrorFetch, Namespace: ns, Target: target,
		Outcome: outcome, Detail: detail})
}

// unanswered reports whether err says the upstream did not answer a
// pull: unreachable, too slow, busy, or failing (5xx).
func unanswered(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	if _, ok := errors.AsType[*registryclient.NetworkError](err); ok {
		return true
	}
	if _, ok := errors.AsType[*registryclient.RateLimitError](err); ok {
		return true
	}
	se, ok := errors.AsType[*registryclient.StatusError](err)
	return ok && se.StatusCode >= 500
}

// pullVersion fetches ns/path@version from upstream u, verifies it and
// stores it with the publish protocol, and returns who signed it
// ([publish.Signers]). Nothing is stored unless every
// check passes: the upstream's digest index (when it serves one: a
// reference server does not) covers the manifest and exactly the files
// it declares, the package passes every check of an upload (schema,
// paths, reserved names, limits), and the signatures verify (by a key of
// the namespace's signer file, when the signers folder has one).
func (h *Mirror) pullVersion(ctx context.Context, ns, path, version string, u *upstream.Upstream) (signers []string, err error) {
	remote := u.Namespaces[ns]
	id := registry.ID{Namespace: remote, Path: path, Version: version}
	var (
		idx   *registry.DigestIndex
		mr    *registryclient.ManifestResult
		files = map[string][]byte{}
		sigs  *wire.Signatures
	)
	lim := h.limits
	err = h.upstreamCall(ctx, u, "version", func(ctx context.Context, cl *registryclient.Client) error {
		var err error
		if idx, err = cl.Digests(ctx, id); err != nil {
			return err
		}
		if mr, err = cl.ManifestWithDigest(ctx, id); err != nil {
			return err
		}
		if mr.Manifest.Version != version || mr.Manifest.Namespace != remote {
			return fmt.Errorf("the upstream's manifest of %s names %s@%s", id, mr.Manifest.Namespace, mr.Manifest.Version)
		}
		if err := mirrorSafe(mr.Manifest); err != nil {
			return err
		}
		paths := mr.Manifest.FilePaths()
		if len(paths) >= lim.MaxEntries {
			return fmt.Errorf("the manifest declares %d files, more than %d", len(paths), lim.MaxEntries)
		}
		var total int64
		for _, p := range paths {
			if !registry.ValidFilePath(p) || layout.Reserved(p) || p == layout.ManifestFile || len(p) > lim.MaxPathLen {
				return fmt.Errorf("the manifest declares file %q, which is not a file path a package may hold", p)
			}
			if idx != nil {
				if _, ok := idx.Files[p]; !ok {
					return fmt.Errorf("file %s is not in the upstream's digest index", p)
				}
			}
			b, err := cl.File(ctx, id, p)
			if err != nil {
				return err
			}
			if total += int64(len(b)); total > lim.MaxUnpacked {
				return fmt.Errorf("the files of %s exceed %d bytes", id, lim.MaxUnpacked)
			}
			files[p] = b
		}
		if sigs, err = cl.Signatures(ctx, id, version); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The same checks as an upload, on the package the upstream served.
	var packed bytes.Buffer
	if err := pkgarchive.PackFiles(&packed, mr.Bytes, files); err != nil {
		return nil, err
	}
	pkg := packed.Bytes()
	ix, contents, err := pkgarchive.Inspect(pkg, pkgarchive.Limits{MaxUpload: int64(len(pkg)) + 1,
		MaxUnpacked: lim.MaxUnpacked + int64(len(mr.Bytes)), MaxEntries: lim.MaxEntries, MaxPathLen: lim.MaxPathLen})
	if err != nil {
		return nil, fmt.Errorf("the upstream's %s fails the checks of an upload: %w", id, err)
	}
	if strings.Join(contents.Segments, "/") != path {
		return nil, fmt.Errorf("the upstream's manifest of %s is stored under %s", id, strings.Join(contents.Segments, "/"))
	}
	upIdx, err := ix.DigestIndex(contents)
	if err != nil {
		return nil, err
	}
	if idx != nil {
		want, _ := idx.Marshal()
		got, _ := upIdx.Marshal()
		if !bytes.Equal(want, got) {
			return nil, fmt.Errorf("the upstream's digest index of %s does not describe the files it served", id)
		}
	} else {
		h.Log.Info("upstream serves no digest index (a reference server): storing what it served, with a digest index computed here",
			zap.String("upstream", u.Label()), zap.String("version", id.String()))
	}
	var fields [][]byte
	if sigs != nil {
		for _, s := range sigs.Signatures {
			fields = append(fields, []byte(s.Signature))
		}
	}
	sigDoc, err := h.judgeSignatures(ns, path, version, upIdx, fields)
	if err != nil {
		return nil, err
	}
	signers = publish.Signers(sigDoc)
	localIdx := *upIdx
	localIdx.Namespace = ns
	if ns != remote {
		// The signatures sign the upstream's names, not this server's:
		// they were checked above, and are not served under another name.
		sigDoc = nil
	}
	v := publish.Version{Namespace: ns, Segments: contents.Segments, Version: version, Manifest: mr.Bytes, Index: &localIdx, Signatures: sigDoc}
	names := make([]string, 0, len(files))
	for p := range files {
		names = append(names, p)
	}
	if err := v.CheckKeys(names); err != nil {
		return nil, err
	}
	write := func(put publish.PutFunc) error {
		for _, p := range names {
			if err := put(ctx, p, int64(len(files[p])), bytes.NewReader(files[p])); err != nil {
				return err
			}
		}
		return nil
	}
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		err := h.publisher.Publish(ctx, v, write)
		if !errors.Is(err, publish.ErrVersionExists) {
			if err == nil {
				h.Log.Info("stored a version from upstream", zap.String("upstream", u.Label()), zap.String("path", v.Path()))
			}
			return signers, err
		}
		// Another replica (or an earlier pull) has it, or is storing it
		// right now: wait for its commit point.
		if _, err := storage.Fresh(h.Store).Stat(ctx, layout.Manifest(ns, path, version)); err == nil {
			return signers, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for another server to store %s: %w", v.Path(), ctx.Err())
		case <-time.After(wait):
		}
	}
}

// mirrorSafe refuses a manifest that names a ".git" component in a
// package path, or a target a client would refuse to write: a mirror
// stores only what every client can use safely.
func mirrorSafe(m *registry.Manifest) error {
	files := append([]registry.File(nil), m.Files...)
	for _, l := range []registry.Language{registry.LangJS, registry.LangTS} {
		if b, ok := m.Languages[l]; ok {
			files = append(files, b.Files...)
		}
	}
	for _, f := range files {
		if _, err := registry.CleanTarget(f.Target); err != nil {
			return err
		}
	}
	for _, p := range m.FilePaths() {
		for seg := range strings.SplitSeq(p, "/") {
			if registry.IsDotGit(seg) {
				return fmt.Errorf("the manifest declares file %q, inside a .git folder", p)
			}
		}
	}
	return nil
}
