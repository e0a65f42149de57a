package census

import (
	"context"
	"time"

	"github.com/jigkit/jig/registry/wire"

	"go.uber.org/zap"
)

// The census's upkeep: how often it runs, and how long the daily history
// is kept.
const (
	upkeepEvery = time.Minute
	// HistoryMaxAge is how long a day of the history is kept: the
	// longest window GET /census/@ns/<path>?history= takes.
	HistoryMaxAge = wire.MaxCensusHistoryDays * 24 * time.Hour
	// historyClaim prefixes the claim of a day's snapshot: one replica
	// takes it.
	historyClaim = "census.history:"
)

// run does the upkeep at start and then every [upkeepEvery] until Close.
func (h *Server) run() {
	defer close(h.done)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-h.stop
		cancel()
	}()
	h.importStored(ctx)
	close(h.imported)
	tick := time.NewTicker(upkeepEvery)
	defer tick.Stop()
	for {
		h.upkeep()
		select {
		case <-tick.C:
		case <-h.stop:
			return
		}
	}
}

// upkeep removes the reports older than the maximum age and records
// yesterday's counts as its day of the history, once among replicas (the
// first upkeep after midnight UTC takes the counts as they were at the
// end of the day), then drops the days older than [HistoryMaxAge].
func (h *Server) upkeep() {
	h.upkeepMu.Lock()
	defer h.upkeepMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	go func() {
		select {
		case <-h.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	now := h.Now().UTC()
	if n, err := h.State.Expire(ctx, "", now.Add(-h.maxAge), 0); err != nil {
		h.Log.Warn("census upkeep: removing expired reports failed", zap.Error(err))
	} else if n > 0 {
		h.Log.Info("census upkeep: expired reports removed", zap.Int("projects", n))
	}
	day := h.unrecorded
	if day.IsZero() {
		yesterday := now.AddDate(0, 0, -1)
		won, err := h.State.Claim(ctx, historyClaim+yesterday.Format(time.DateOnly))
		if err != nil {
			h.Log.Warn("census upkeep: claiming the day's history failed", zap.Error(err))
			return
		}
		if !won {
			return
		}
		day = yesterday
	}
	// A day claimed and not recorded is tried again at the next upkeep.
	h.unrecorded = day
	if err := h.State.Snapshot(ctx, day); err != nil {
		h.Log.Warn("census upkeep: recording the day's history failed; trying again in a minute", zap.Error(err))
		return
	}
	h.unrecorded = time.Time{}
	if err := h.State.PruneHistory(ctx, now.Add(-HistoryMaxAge)); err != nil {
		h.Log.Warn("census upkeep: pruning the history failed", zap.Error(err))
	}
}
