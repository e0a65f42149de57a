// Package cacheref is the one home of the refs the registry clients
// write into the cache (registryclient) and jig cache list reads back:
// "<escaped server URL>/@ns/<path>/<version>" for a digest index,
// ".../signatures/@ns/<path>/<version>" for signatures and
// ".../presets/<name>/<version>" for a preset.
package cacheref

import (
	"net/url"
	"strings"

	"github.com/jigkit/jig/registry"
)

// The segments after the server that say what a ref holds other than a
// digest index.
const (
	Signatures = "signatures"
	Presets    = "presets"
)

// Base is the start of every ref of server: its URL, query-escaped.
func Base(server string) string { return url.QueryEscape(server) }

// Ref is a ref of the cache (cache.Entry.Ref) read back: which
// server and what content it names.
type Ref struct {
	// Server is the server's URL, without user info.
	Server string
	// Registry is "@ns/path@version", or "@presets/name@version".
	Registry string
	// Content is "digest index", "signatures" or "preset".
	Content string
}

// Parse reads a ref the clients write into the cache; ok is false
// for a ref of another shape.
func Parse(ref string) (r Ref, ok bool) {
	base, rest, found := strings.Cut(ref, "/")
	if !found {
		return r, false
	}
	server, err := url.QueryUnescape(base)
	if err != nil {
		return r, false
	}
	r.Server = server
	parts := strings.Split(rest, "/")
	content := "digest index"
	switch parts[0] {
	case Signatures:
		content, parts = "signatures", parts[1:]
	case Presets:
		if len(parts) != 3 {
			return r, false
		}
		r.Registry, r.Content = registry.PresetNamespace+"/"+parts[1]+"@"+parts[2], "preset"
		return r, true
	}
	if len(parts) < 3 || !strings.HasPrefix(parts[0], "@") {
		return r, false
	}
	n := len(parts)
	r.Registry = strings.Join(parts[:n-1], "/") + "@" + parts[n-1]
	r.Content = content
	return r, true
}
