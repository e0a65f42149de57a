package registryserver

import (
	"fmt"
	"time"
)

// WithSearchRefresh sets how often the in-memory search index (GET
// /search, GET /presets, the web catalog) is rebuilt from storage. A
// publish through this handler updates the index at once; the rebuild picks
// up versions published through other replicas sharing the storage. The
// index is built on first use, and the periodic rebuild runs from then on
// until [Handler.Close]. The default is 60 seconds.
func WithSearchRefresh(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("WithSearchRefresh: interval %s must be positive", d)
		}
		o.searchRefresh = d
		return nil
	}
}
