package cli

import (
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient"
)

// TestPublishHintSSO: a person signed in with jig login --sso is told to
// log in again, or that their groups lack the right, never to set a token
// first; a token's user keeps the token hints.
func TestPublishHintSSO(t *testing.T) {
	t.Parallel()
	pkg := &registryclient.Package{Manifest: &registry.Manifest{Namespace: "@team"}}
	for _, tc := range []struct {
		code wire.Code
		sso  bool
		want string
	}{
		{wire.CodeTokenExpired, true, "log in again with jig login @team --sso"},
		{wire.CodeInvalidToken, true, "log in again with jig login @team --sso"},
		{wire.CodeInsufficientPerms, true, "Your groups give no right to publish to @team (jig whoami @team lists yours)"},
		{wire.CodeNamespaceNotAllowed, true, "Your groups give no right to publish to @team"},
		{wire.CodeTokenExpired, false, "Set a token with publish permission: jig config set @team --token <token>"},
		{wire.CodeInsufficientPerms, false, "Set a token with publish permission: jig config set @team --token <token>"},
		{wire.CodeVersionExists, true, "Published versions are immutable"},
	} {
		got := publishHint(tc.code, pkg, "@team", tc.sso)
		if !strings.Contains(got, tc.want) {
			t.Errorf("publishHint(%s, sso=%v) = %q, want it to contain %q", tc.code, tc.sso, got, tc.want)
		}
	}
}
