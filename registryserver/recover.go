package registryserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/jigkit/jig/registryserver/internal/publishing"
	"github.com/jigkit/jig/registryserver/storage"
)

// Recovery is what one [Handler.Recover] removed or repaired.
type Recovery struct {
	// UploadFiles and UploadBytes count the upload files of dead
	// jig-server processes removed from the upload folder.
	UploadFiles int
	UploadBytes int64
	// Claims counts the claims of gone publishers taken over and
	// released; each version can be published again.
	Claims int
	// RemovedKeys counts the keys of unfinished versions deleted.
	RemovedKeys int
	// ListedVersions counts complete versions whose publisher died before
	// adding them to versions.json, now listed.
	ListedVersions int
}

// Empty reports whether nothing was found to recover.
func (r Recovery) Empty() bool { return r == Recovery{} }

// Recover removes what interrupted publishes left behind: the upload files
// of jig-server processes that died (see [WithUploadTempDir]), and the
// claims and partly written versions of publishes whose publisher is gone
// (see [WithPublishClaimTTL]): those versions can be published again at
// once and no half-written file stays in the storage. Complete versions
// that were not yet listed are added to their versions.json. Publishes in
// progress, in this process or another replica, are left alone. The
// Handler runs it every claim TTL; jig-server also runs it at start, once
// its port is bound.
func (h *Handler) Recover(ctx context.Context) (Recovery, error) {
	var rec Recovery
	sw, uerr := h.pub.Scratch.Sweep()
	rec.UploadFiles, rec.UploadBytes = sw.Files, sw.Bytes
	pr, perr := h.pub.Store.Recover(ctx)
	rec.Claims, rec.RemovedKeys, rec.ListedVersions = pr.Claims, pr.Removed, pr.Listed
	if pr.Claims > 0 {
		// Versions were removed or listed behind the read cache's back.
		h.core.RCache.Invalidate()
	}
	if uerr != nil {
		uerr = fmt.Errorf("cleaning the upload folder %s: %w", h.pub.Scratch.Path(), uerr)
	}
	return rec, errors.Join(uerr, perr)
}

// sweepUploads removes the upload files of dead processes and logs it.
func (h *Handler) sweepUploads(p *publishing.State) {
	sw, err := p.Scratch.Sweep()
	if err != nil {
		h.core.Log.Warn("cleaning the upload folder failed", zap.String("folder", p.Scratch.Path()), zap.Error(err))
	}
	if sw.Files > 0 {
		h.core.Log.Info("removed the uploads of jig-server processes that died", zap.String("folder", p.Scratch.Path()),
			zap.Int("files", sw.Files), zap.Int64("bytes", sw.Bytes))
	}
}

// recoverLoop runs Recover every interval until stop is closed.
func (h *Handler) recoverLoop(p *publishing.State, interval time.Duration, stop <-chan struct{}, stopped chan<- struct{}) {
	defer close(stopped)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		// Not a request path: the run has its own bound, and ends early
		// when the handler closes.
		ctx, cancel := context.WithTimeout(context.Background(), interval)
		go func() {
			select {
			case <-stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		h.logRecovery(h.Recover(ctx))
		cancel()
	}
}

// logRecovery logs what a [Handler.Recover] did.
func (h *Handler) logRecovery(rec Recovery, err error) {
	if err != nil {
		h.core.Log.Warn("recovering interrupted publishes failed", zap.Error(err))
	}
	if !rec.Empty() {
		h.core.Log.Info("recovered interrupted publishes",
			zap.Int("uploads", rec.UploadFiles), zap.Int64("upload_bytes", rec.UploadBytes),
			zap.Int("claims", rec.Claims), zap.Int("removed_keys", rec.RemovedKeys), zap.Int("listed_versions", rec.ListedVersions))
	}
}

// uploadDir returns the upload folder: dir when set, else the storage's
// scratch folder on disk, else one of this user's in the system's
// temporary directory.
func (h *Handler) uploadDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	if sd, ok := h.core.Store.(storage.ScratchDirer); ok {
		return sd.ScratchDir("uploads")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("jig-server-uploads-%d", os.Getuid())), nil
}
