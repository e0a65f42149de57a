package registryserver

import "github.com/jigkit/jig/registryserver/upstream"

// The upstreams file of a mirror is read by package upstream; these names
// are its types under the names the handler's options use.
type (
	// UpstreamMode is an [upstream.Mode]; see [WithUpstreamMode].
	UpstreamMode = upstream.Mode
	// Upstream is an [upstream.Upstream]: one entry of an upstreams file.
	Upstream = upstream.Upstream
	// UpstreamConfig is an [upstream.Config]: a parsed upstreams file.
	UpstreamConfig = upstream.Config
)

// The modes of [WithUpstreamMode].
const (
	UpstreamPullThrough = upstream.PullThrough
	UpstreamOffline     = upstream.Offline
	// DefaultUpstreamTimeout is [upstream.DefaultTimeout].
	DefaultUpstreamTimeout = upstream.DefaultTimeout
)

// LoadUpstreams reads and parses the upstreams file at path: [upstream.Load].
func LoadUpstreams(path string) (*UpstreamConfig, error) { return upstream.Load(path) }

// ParseUpstreams parses an upstreams file: [upstream.Parse].
func ParseUpstreams(data []byte, lookup func(string) (string, bool)) (*UpstreamConfig, error) {
	return upstream.Parse(data, lookup)
}
