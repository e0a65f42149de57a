package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/apply"
	"github.com/jigkit/jig/registryclient/rcfile"
)

// TestLibraryErrorAdvice: the library's errors say what is wrong and
// carry typed fields; jig adds the command to run, in the same words the
// library used to write itself, wherever the error sits in the chain.
func TestLibraryErrorAdvice(t *testing.T) {
	t.Parallel()
	const fp = "SHA256:abc"
	importFailed := &registryclient.ImportedError{Version: "@team/ci/node@1.0.0", Bundle: "/tmp/ci.jigbundle", Server: "http://r.example", Err: errors.New("connection refused")}
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"trust: not configured", &rcfile.TrustError{Reason: rcfile.TrustNotConfigured, Namespace: "@co"},
			"registry @co is not configured; add it first with 'jig config set @co --url <url>', then trust its keys"},
		{"trust: key taken", &rcfile.TrustError{Reason: rcfile.TrustKeyTaken, Namespace: "@co", Fingerprint: fp, Principal: "alice"},
			"key SHA256:abc is already trusted for @co as alice; remove it first with 'jig trust remove @co --key SHA256:abc'"},
		{"trust: no policy", &rcfile.TrustError{Reason: rcfile.TrustNoPolicy, Namespace: "@co"},
			"@co has no trust policy to remove (see 'jig trust list')"},
		{"trust config: key twice, wrapped", fmt.Errorf("reading /x/.jigrc: %w", &registryclient.TrustConfigError{Reason: registryclient.TrustKeyTwice, Namespace: "@co", Fingerprint: fp}),
			"reading /x/.jigrc: registry @co: trust.keys lists key SHA256:abc twice; remove one with 'jig trust remove @co --key SHA256:abc'"},
		{"trust config: signers unreadable", &registryclient.TrustConfigError{Reason: registryclient.TrustSignersUnreadable, Namespace: "@co", Err: errors.New("open /s: no such file")},
			"invalid registry configuration: registry @co: reading trust.allowedSigners: open /s: no such file; fix the path with 'jig trust add @co --allowed-signers <file>'"},
		{"bundle: cached with other content", fmt.Errorf("the bundle was not imported, nothing was written to the cache:\n  %w", &registryclient.CachedOtherError{Version: "@team/x@1.0.0", Server: "http://r.example"}),
			"the bundle was not imported, nothing was written to the cache:\n  @team/x@1.0.0 is cached from http://r.example with other content (its digest index differs); run 'jig cache clean' if the bundle is right"},
		{"imported: unpublished", &registryclient.ImportedError{Version: "@team/ci/node@1.0.0", Bundle: "/tmp/ci.jigbundle", Server: "http://r.example", Unpublished: true},
			"@team/ci/node@1.0.0 in the cache came from the bundle /tmp/ci.jigbundle, and http://r.example does not confirm that version: it serves no digest index for it (removed, never published there, a server without digest indexes, or a namespace that needs a token: jig login @team); nothing was used from the bundle. Run 'jig cache clean' to drop the bundle's content, or run with --offline to use it as it is"},
		{"imported: differs", fmt.Errorf("resolving @team/ci/node: %w", &registryclient.ImportedError{Version: "@team/ci/node@1.0.0", Bundle: "/tmp/ci.jigbundle", Server: "http://r.example"}),
			"resolving @team/ci/node: @team/ci/node@1.0.0 in the cache came from the bundle /tmp/ci.jigbundle, and its digest index differs from the one http://r.example publishes: the bundle's content is not the server's; nothing was used from it. Run 'jig cache clean' to drop it (the server's content is fetched again)"},
		{"imported: server not asked", fmt.Errorf("%w (while adding)", importFailed),
			"checking @team/ci/node@1.0.0, which the bundle /tmp/ci.jigbundle put in the cache, with http://r.example: connection refused; nothing was used from the bundle (run with --offline to use it without asking the server, or 'jig cache clean' to drop it) (while adding)"},
		{"adopt: no rack.json", &apply.AdoptError{Dir: "/p", Reason: apply.AdoptNoReferenceFile},
			"cannot adopt the project: no rack.json in /p; jig adopt carries over a project the reference (rk) made"},
		{"adopt: jig.json there", &apply.AdoptError{Dir: "/p", Reason: apply.AdoptHasProjectFile},
			"cannot adopt the project: /p already has a jig.json; jig adopt only writes one for a project that has none"},
		{"adopt: dependency not listed", &apply.AdoptError{Dir: "/p", Reason: apply.AdoptDependencyNotListed, Dependency: "@main/runtimes/node"},
			"cannot adopt the project: a registry rack.json lists depends on @main/runtimes/node, which rack.json does not list (a dependency added since?); add it with 'rk add @main/runtimes/node', then run 'jig adopt' again"},
		{"resolve: not conflicted", &apply.NoConflictError{Dir: "/p", Target: "a.txt", Reason: apply.NoConflictNotConflicted},
			"nothing to resolve: a.txt is not a file the last update left conflicted (the sides of a conflict are kept until it is resolved or the update aborted)"},
		{"resolve: sides gone", &apply.NoConflictError{Dir: "/p", Target: "a.txt", Reason: apply.NoConflictSidesGone},
			"nothing to resolve: the sides of a.txt's conflict are no longer kept (the project was written since the update); edit the file by hand (look for <<<<<<< markers), then run 'jig check'"},
		{"abort: no update", &apply.NoConflictError{Dir: "/p", Reason: apply.NoConflictNoUpdate},
			"nothing to resolve: no update to abort in /p (an update that finished without conflicts cannot be aborted); 'jig update --to <version>' moves back"},
		{"abort: files changed", &apply.JournalError{Dir: "/p", Reason: "a.txt changed since the update wrote it, and aborting would lose that", Changed: []string{"a.txt"}, Hint: "library words"},
			"jig's journal cannot be used: .jig/journal.json in /p: a.txt changed since the update wrote it, and aborting would lose that; nothing was changed. To go on: copy your changes away and run 'jig update --abort' again, or keep the update and settle its conflicts with 'jig resolve <file> --ours|--theirs'"},
		{"sign: agent cannot sign", fmt.Errorf("--sign-key: %w", &signing.AgentError{Path: "/k/id", Err: errors.New("signing key /k/id is encrypted and no ssh-agent is running (SSH_AUTH_SOCK is unset): run `ssh-add /k/id`")}),
			"--sign-key: signing key /k/id is encrypted and no ssh-agent is running (SSH_AUTH_SOCK is unset): run `ssh-add /k/id`, or sign elsewhere with `ssh-keygen -Y sign -n jig-registry -f /k/id <digest index>` ('jig publish --print-digests' prints it) and pass the signature with --signature"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got, want := ErrorText(tt.err), "Error: "+tt.want; got != want {
				t.Errorf("ErrorText:\n got %q\nwant %q", got, want)
			}
			if r := reportFor(tt.err, 0, false); r.Message != tt.want || r.Hint != "" {
				t.Errorf("--json: message %q, hint %q; want message %q, no hint", r.Message, r.Hint, tt.want)
			}
		})
	}
	// The advice does not hide what the error is.
	if err := withAdvice(fmt.Errorf("x: %w", importFailed)); !errors.Is(err, importFailed) {
		t.Errorf("withAdvice lost the chain: %v", err)
	}
}
