package registryclient

import (
	"fmt"
	"sort"
	"strings"

	"github.com/jigkit/jig/registry"
)

// Entry is one registry source: where a namespace's registries come from
// and what is sent with each request. [NewSources] takes entries as Go
// values; a [Resolver] such as the rc file
// ([github.com/jigkit/jig/registryclient/rcfile.Config]) gives them to
// [NewSourcesFrom].
type Entry struct {
	// URL is the server's base URL (see [New]).
	URL string `json:"url"`
	// Token is sent as "Authorization: Bearer <token>". It is kept in
	// its own field and never written into Headers.
	Token string `json:"token,omitempty"`
	// Headers are sent with every request to the source.
	Headers map[string]string `json:"headers,omitempty"`
	// DefaultNamespace is the namespace ("@rack") that shorthand
	// identifiers ("runtimes/node") mean in what this source serves; for
	// the @main entry, also in identifiers typed on the command line. It
	// overrides what the server advertises. "" means: ask the server (GET
	// /namespaces), else [registry.DefaultNamespace].
	DefaultNamespace string `json:"defaultNamespace,omitempty"`
	// Trust is the namespace's signing policy; nil means none (see
	// [Trust]).
	Trust *Trust `json:"trust,omitempty"`
	// SSO is the session of jig login --sso, nil for none; Token is then
	// its current session token.
	SSO *SSOSession `json:"sso,omitempty"`
	// TokenSource, when set, gives the token of each request in place of
	// Token ([WithTokenSource]): the rc file sets one that refreshes an
	// SSO session. It is never saved.
	TokenSource TokenSource `json:"-"`
}

// CheckDefaultNamespace checks e.DefaultNamespace as the entry of
// namespace ns: "" (none) or a namespace such as "@rack" other than
// [registry.PresetNamespace]. The error names ns and the value.
func (e Entry) CheckDefaultNamespace(ns string) error {
	if v := e.DefaultNamespace; v != "" && !registry.ValidDefaultNamespace(v) {
		return fmt.Errorf("registry %s: defaultNamespace %q must be a namespace such as @rack, other than %s", ns, v, registry.PresetNamespace)
	}
	return nil
}

// Header is one displayed header.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// DisplayHeaders returns the headers sent to the source as they are shown:
// the token as "Authorization: Bearer <token>" first, then the custom
// headers sorted by name (an Authorization custom header is replaced by the
// token). Values are shown as stored.
func (e Entry) DisplayHeaders() []Header {
	var out []Header
	var auth *Header
	names := make([]string, 0, len(e.Headers))
	for k := range e.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if strings.EqualFold(k, "Authorization") {
			if e.Token == "" {
				auth = &Header{Name: k, Value: e.Headers[k]}
			}
			continue
		}
		out = append(out, Header{Name: k, Value: e.Headers[k]})
	}
	if e.Token != "" {
		auth = &Header{Name: "Authorization", Value: "Bearer " + e.Token}
	}
	if auth != nil {
		out = append([]Header{*auth}, out...)
	}
	return out
}
