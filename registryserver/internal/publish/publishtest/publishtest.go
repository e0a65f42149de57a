// Package publishtest holds what tests of concurrent publishing share.
package publishtest

import (
	"errors"
	"testing"

	"github.com/jigkit/jig/registryserver/internal/publish"
)

// OneWinner checks the outcome of publishers racing for one version:
// exactly one nil error, every other one publish.ErrVersionExists. It
// returns the winner's index and stops the test when there is none.
func OneWinner(t testing.TB, errs []error) int {
	t.Helper()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("publishers %d and %d both published, want exactly one", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, publish.ErrVersionExists):
			t.Errorf("publisher %d: %v, want nil or ErrVersionExists", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no publisher won, want exactly one")
	}
	return winner
}
