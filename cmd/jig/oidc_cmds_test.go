package main_test

import (
	"os"
	"strings"
	"sync"

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
