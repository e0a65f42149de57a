package registryserver

import (
	"context"
	"fmt"
	"time"

	"github.com/jigkit/jig/internal/redact"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/internal/index"
	"github.com/jigkit/jig/registryserver/state"
)

// WithSearchRefresh sets how often the in-memory catalog index (GET
// /search, GET /presets, namespace listings, the web catalog) reads the
// catalog's change log in storage, where every replica records what it
// commits. A publish through this handler updates the index at once; the
// change log brings other replicas' publishes, within d. The index is
// loaded on first use (from its snapshot in storage, or from a full read
// when there is none), and follows the log from then on until
// [Handler.Close]. The default is the storage cache's TTL
// ([WithMutableTTL]) between 1 and 5 seconds, so another replica's
// publish reaches search as soon as it reaches the other reads.
func WithSearchRefresh(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("WithSearchRefresh: interval %s must be positive", d)
		}
		o.searchRefresh = d
		return nil
	}
}

// indexRefresh is the change log's polling interval: the configured one,
// or the mutable TTL clamped to 1..5 s.
func (o *options) indexRefresh() time.Duration {
	if o.searchRefresh > 0 {
		return o.searchRefresh
	}
	return min(max(o.mutableTTL, time.Second), index.DefaultRefresh)
}

// IndexStats counts what the catalog index holds.
type IndexStats struct {
	Namespaces int // namespaces with at least one registry
	Registries int // registries with a versions.json (listed)
	Searchable int // registries with a readable latest version
	Presets    int
}

// RebuildIndex reads the whole storage into the catalog index, writes it
// as the index's snapshot and records the rebuild in the change log, so
// every replica sharing the storage loads the new snapshot at its next
// poll. Searches keep being answered from the previous index meanwhile.
// Only needed when content reached the storage without jig (copied by
// hand, restored from a backup of the registries alone); `jig-server
// index rebuild` runs it. The audit log records the rebuild, done by the
// operator, with what the index holds or why it failed.
func (h *Handler) RebuildIndex(ctx context.Context) (IndexStats, error) {
	ev := state.Event{Action: core.ActionIndexRebuild, Target: "catalog index"}
	if err := h.index.Rebuild(ctx); err != nil {
		ev.Outcome, ev.Detail = core.OutcomeOf(err), redact.Text(err.Error(), nil)
		h.core.AuditOperator(ev)
		return IndexStats{}, err
	}
	s := h.index.Stats()
	ev.Outcome = core.OutcomeOK
	ev.Detail = fmt.Sprintf("%d registries (%d searchable) in %d namespaces, %d presets", s.Registries, s.Searchable, s.Namespaces, s.Presets)
	h.core.AuditOperator(ev)
	return IndexStats{Namespaces: s.Namespaces, Registries: s.Registries, Searchable: s.Searchable, Presets: s.Presets}, nil
}

// ChangeNotifier carries "the catalog changed" between the replicas that
// share a storage, so their indexes read the change log at once rather
// than at their next poll. [redisnotify.Notifier] implements it over
// Redis. The change log in the storage stays the source of truth: a lost
// notification costs only the wait until the next poll.
type ChangeNotifier interface {
	// Notify tells the other replicas; best effort.
	Notify(ctx context.Context) error
	// Subscribe calls changed for every notification until ctx is done.
	Subscribe(ctx context.Context, changed func())
}

// WithChangeNotifier sets the notifier through which this handler tells
// the other replicas of its publishes and learns of theirs. Without one,
// replicas learn of each other's publishes at their next poll of the
// change log ([WithSearchRefresh]).
func WithChangeNotifier(n ChangeNotifier) Option {
	return func(o *options) error {
		o.notifier = n
		return nil
	}
}
