package main_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/jigkit/jig/internal/oidctest"
)

// start-oidc: starts an OIDC provider on loopback (zitadel/oidc's OP:
// discovery and JWKS) for the script; sets $OIDC_URL (its issuer) and
// $OIDC_AUDIENCE (the audience of its tokens).
func cmdStartOIDC(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: start-oidc")
	}
	p, stop, err := oidctest.Start()
	ts.Check(err)
	ts.Defer(stop)
	oidcMu.Lock()
	oidcProviders[ts] = p
	oidcMu.Unlock()
	ts.Defer(func() {
		oidcMu.Lock()
		delete(oidcProviders, ts)
		oidcMu.Unlock()
	})
	ts.Setenv("OIDC_URL", p.URL)
	ts.Setenv("OIDC_AUDIENCE", oidctest.Audience)
}

// oidcProviders are the providers of the running scripts.
var (
	oidcMu        sync.Mutex
	oidcProviders = map[*testscript.TestScript]*oidctest.Provider{}
)

// oidc-token file claim=value...: writes a token of the script's provider
// with the claims (over iss, aud, sub and times) to file.
func cmdOIDCToken(ts *testscript.TestScript, neg bool, args []string) {
	oidcMu.Lock()
	p := oidcProviders[ts]
	oidcMu.Unlock()
	if neg || len(args) < 1 || p == nil {
		ts.Fatalf("usage: oidc-token file claim=value... (after start-oidc)")
	}
	claims := map[string]any{}
	for _, a := range args[1:] {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			ts.Fatalf("oidc-token: %q is not claim=value", a)
		}
		claims[k] = v
	}
	tok, err := p.SignedToken(claims)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(tok+"\n"), 0o600))
}

// expand-env file...: replaces $VAR and ${VAR} in each file with the
// script's environment (an auth.json naming $OIDC_URL).
func cmdExpandEnv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: expand-env file...")
	}
	for _, f := range args {
		data, err := os.ReadFile(ts.MkAbs(f))
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(f), []byte(os.Expand(string(data), ts.Getenv)), 0o600))
	}
}

// oidc-groups user group...: sets the groups the provider puts in the
// ID tokens of user (oidctest.User is "id1") from now on.
func cmdOIDCGroups(ts *testscript.TestScript, neg bool, args []string) {
	p := scriptProvider(ts)
	if neg || len(args) < 1 {
		ts.Fatalf("usage: oidc-groups user group... (after start-oidc)")
	}
	p.SetGroups(args[0], args[1:]...)
}

// oidc-approve user: plays the person at the provider's device page: waits
// for the next device login a jig started (in the background) to show its
// code, then approves it as user. oidc-deny denies it.
func cmdOIDCApprove(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: oidc-approve user")
	}
	p, code := nextCode(ts)
	ts.Check(p.Approve(code, args[0]))
}

func cmdOIDCDeny(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: oidc-deny")
	}
	p, code := nextCode(ts)
	ts.Check(p.Deny(code))
}

func nextCode(ts *testscript.TestScript) (*oidctest.Provider, string) {
	p := scriptProvider(ts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // guards against a hang only
	defer cancel()
	code, err := p.NextCode(ctx)
	ts.Check(err)
	return p, code
}

// oidc-end-sessions user: the provider revokes user's refresh tokens.
func cmdOIDCEndSessions(ts *testscript.TestScript, neg bool, args []string) {
	p := scriptProvider(ts)
	if neg || len(args) != 1 {
		ts.Fatalf("usage: oidc-end-sessions user")
	}
	p.EndSessions(args[0])
}

func scriptProvider(ts *testscript.TestScript) *oidctest.Provider {
	oidcMu.Lock()
	defer oidcMu.Unlock()
	p := oidcProviders[ts]
	if p == nil {
		ts.Fatalf("start-oidc first")
	}
	return p
}
