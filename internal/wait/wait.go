// Package wait sleeps for as long as a context allows.
package wait

import (
	"context"
	"time"
)

// Sleep waits for d, or until ctx is done, whichever comes first; it
// returns ctx.Err() in the second case and nil in the first.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
