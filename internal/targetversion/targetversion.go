// Package targetversion is the one check of a target version: jig
// update's --to, jig mcp's "to" and the apply engine's
// UpdateRequest.To.
package targetversion

import (
	"errors"
	"fmt"

	"github.com/jigkit/jig/registry"
)

// ErrNeedsOneRegistry is the error of [Check] for a target version with
// no registry or several (the apply package's ErrToNeedsOneRegistry).
var ErrNeedsOneRegistry = errors.New("a target version needs exactly one registry")

// Check checks a target version for an update of n registries: "" is
// always fine; otherwise n must be 1 ([ErrNeedsOneRegistry]) and to a
// full SemVer version. Callers add the name of their flag.
func Check(to string, n int) error {
	switch {
	case to == "":
		return nil
	case n != 1:
		return ErrNeedsOneRegistry
	case !registry.ValidVersion(to):
		return fmt.Errorf("%q is not a full SemVer version (for example 1.2.0)", to)
	}
	return nil
}
