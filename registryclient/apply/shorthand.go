package apply

import (
	"context"
	"fmt"

	"github.com/jigkit/jig/registry"
)

// ShorthandError wraps the failure to fetch a registry that was named in
// shorthand, so that a caller can say how the shorthand was read and how
// to read it differently.
type ShorthandError struct {
	// Written is the identifier as written, e.g. "runtimes/node".
	Written string
	// ID is what it was read as, e.g. "@main/runtimes/node".
	ID registry.ID
	// From is the namespace whose content named it: "@presets" for a
	// preset member, a registry's namespace for its registryDependencies,
	// [registry.DefaultNamespace] for an identifier the user typed.
	From string
	// Err is the failure.
	Err error
}

func (e *ShorthandError) Error() string {
	return fmt.Sprintf("%q was read as %s: %v", e.Written, e.ID.Key(), e.Err)
}

// Unwrap returns the failure.
func (e *ShorthandError) Unwrap() error { return e.Err }

// shortRef records how a registry was named in shorthand.
type shortRef struct {
	written string // as written
	from    string // whose content named it
}

// parseID parses s, an identifier found in what namespace from's source
// served (or typed by the user when from is [registry.DefaultNamespace]).
// Shorthand takes the namespace the source says it means; ok reports
// whether s was shorthand. This is the one place shorthand is resolved.
func (e *Engine) parseID(ctx context.Context, from, s string) (id registry.ID, short bool, err error) {
	id, err = registry.ParseID(s)
	if err != nil || !registry.IsShorthand(s) {
		return id, false, err
	}
	if e.names == nil {
		return id, true, nil
	}
	ns, err := e.names.DefaultNamespace(ctx, from)
	if err != nil {
		return registry.ID{}, true, fmt.Errorf("resolving the shorthand identifier %q: %w", s, err)
	}
	id, err = registry.ParseID(s, registry.WithDefaultNamespace(ns))
	return id, true, err
}
