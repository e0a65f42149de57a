//go:build !unix

package disk

import "context"

// lock takes this process's lock for key's stripe. Without flock(2), other
// processes sharing the directory are not excluded.
func (s *Storage) lock(ctx context.Context, key string) (unlock func(), err error) {
	sem := s.sems[stripeOf(key)]
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
