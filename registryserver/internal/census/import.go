package census

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/storage"
)

// importClaim marks the census objects of storage imported.
const importClaim = "census.import-storage"

// importReporter is the reporter of an imported report.
const importReporter = "imported"

// importStored copies the census reports that older servers kept as
// storage objects (.census/@ns/<sha256>.json) into the state database,
// once: then they are left alone. It runs again after a crash half-way
// (a report imported twice is the same row); reports that no longer
// count (older than the maximum age) and damaged objects are skipped.
func (h *Server) importStored(ctx context.Context) {
	if done, err := h.State.Claimed(ctx, importClaim); err != nil || done {
		if err != nil {
			h.Log.Warn("census: checking for reports to import failed; trying at the next start", zap.Error(err))
		}
		return
	}
	nss, err := storage.ListDir(ctx, h.Store, layout.CensusDir)
	if err != nil {
		h.Log.Warn("census: listing the stored reports to import failed; trying at the next start", zap.Error(err))
		return
	}
	oldest := h.oldest()
	imported, skipped := 0, 0
	for _, dir := range nss {
		ns := strings.TrimSuffix(strings.TrimPrefix(dir, layout.CensusDir), "/")
		if !registry.ValidNamespace(ns) {
			continue
		}
		keys, err := h.Store.List(ctx, layout.CensusNamespaceDir(ns))
		if err != nil {
			h.Log.Warn("census: listing stored reports failed; trying at the next start", zap.String("namespace", ns), zap.Error(err))
			return
		}
		for _, key := range keys {
			r, ok := h.readStored(ctx, key)
			if !ok || r.At.Before(oldest) {
				skipped++
				continue
			}
			r.Namespace = ns
			if err := h.State.PutReport(ctx, r, state.Limits{}); err != nil {
				h.Log.Warn("census: importing a stored report failed; trying at the next start", zap.String("key", key), zap.Error(err))
				return
			}
			imported++
		}
	}
	if _, err := h.State.Claim(ctx, importClaim); err != nil {
		h.Log.Warn("census: marking the stored reports imported failed", zap.Error(err))
	}
	if imported+skipped > 0 {
		h.Log.Info("census: reports kept in storage by an older jig-server imported into the state database; the objects are left as they are",
			zap.Int("imported", imported), zap.Int("skipped", skipped))
	}
}

// readStored reads and checks one stored report.
func (h *Server) readStored(ctx context.Context, key string) (*state.Report, bool) {
	data, _, err := h.ReadDocument(ctx, key)
	if err != nil {
		if !errors.Is(err, storage.ErrNotFound) {
			h.Log.Warn("census: reading a stored report failed", zap.String("key", key), zap.Error(err))
		}
		return nil, false
	}
	var stored wire.CensusReport
	if json.Unmarshal(data, &stored) != nil {
		return nil, false
	}
	at, err := time.Parse(time.RFC3339, stored.ReportedAt)
	if err != nil {
		return nil, false
	}
	// The report is checked as a new one would be.
	stored.ReportedAt = ""
	body, _ := json.Marshal(stored)
	rep, err := parseCensusReport(body)
	if err != nil {
		return nil, false
	}
	return &state.Report{Reporter: importReporter, At: at, CensusReport: *rep}, true
}
