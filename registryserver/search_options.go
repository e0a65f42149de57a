package registryserver

import (
	"fmt"
	"time"

	"github.com/jigkit/jig/registryserver/internal/index"
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
