package registryserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"github.com/jigkit/jig/registryserver/internal/ssotoken"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/internal/oidctrust"
)

// gate makes the access decisions of auth.json for the features
// ([core.Gate]): who a request comes from, what it may read, list,
// census or publish. It reads the auth configuration in force once per
// decision, so that a concurrent [Handler.SetAuth] cannot give a
// decision half of each.
type gate struct {
	auth *atomic.Pointer[AuthConfig]
	// admin is the SHA-256 of the admin token, nil when there is none.
	admin *[sha256.Size]byte
	now   func() time.Time
	// oidc checks the OIDC tokens of the issuers auth.json trusts, and
	// the ID tokens people exchange for session tokens.
	oidc *oidctrust.Verifier
	// ssoKey signs and checks session tokens (jig login --sso).
	ssoKey []byte
}

// Declared reports whether auth.json declares ns (false without an auth
// file).
func (g *gate) Declared(ns string) bool {
	a := g.auth.Load()
	return a != nil && a.Declared(ns)
}

// CallerOf extracts and hashes the request's token and checks it against
// the admin token in constant time.
//
// An OIDC token of an issuer auth.json trusts is verified here (its
// issuer's keys are fetched when they are not cached): the caller gets
// its Identity, or IdentityErr when it does not verify. A token that
// names an issuer auth.json does not trust is a token like any other
// (unknown), and nothing is fetched for it.
func (g *gate) CallerOf(r *http.Request) core.Caller {
	tok := tokenFromRequest(r)
	c := g.CallerFromToken(tok)
	if c.Admin || c.Sum == nil || c.Identity != nil || c.IdentityErr != nil {
		return c
	}
	iss, ok := g.auth.Load().trustedIssuer(tok)
	if !ok {
		return c
	}
	claims, err := g.oidc.Verify(r.Context(), iss, tok)
	if err != nil {
		c.IdentityErr = identityError(err)
		return c
	}
	c.Identity = core.IdentityOf(claims)
	return c
}

// identityError maps a refusal of [oidctrust.Verifier.Verify] to the
// wire.
func identityError(err error) *core.APIError {
	var inv *oidctrust.InvalidError
	switch {
	case errors.Is(err, oidctrust.ErrUnavailable):
		return &core.APIError{Code: wire.CodeIssuerUnavailable, Cause: err,
			Msg: "The issuer of the identity token could not be reached to check it; the token is refused. Try again later."}
	case errors.Is(err, oidctrust.ErrExpired):
		return core.NewAPIError(wire.CodeTokenExpired, "The identity token has expired; request a fresh one from the CI")
	case errors.As(err, &inv):
		return core.NewAPIError(wire.CodeInvalidToken, "Invalid identity token: "+inv.Reason)
	}
	return core.InternalError(err)
}

// identityAccess decides for a caller with an OIDC token (Identity or
// IdentityErr set) whether its claim rules give it scope in ns: it
// returns the scopes there, and the error of a caller who may not read
// ns (the same whether ns is gated or not declared): its IdentityErr,
// 403 FORBIDDEN_NAMESPACE when rules give it scopes elsewhere only, 401
// INVALID_TOKEN when none matches at all.
func (g *gate) identityAccess(c core.Caller, ns string) (scopeSet, *core.APIError) {
	if c.IdentityErr != nil {
		return 0, c.IdentityErr
	}
	here, anywhere := g.auth.Load().identityScopes(ns, c.Identity)
	switch {
	case here != 0:
		return here, nil
	case anywhere != 0:
		return 0, authError(ErrForbiddenNamespace)
	}
	return 0, core.NewAPIError(wire.CodeInvalidToken, "No claim rule of the server's auth.json matches this identity token")
}

// oidcCaller reports whether c sent an OIDC token of a trusted issuer.
func oidcCaller(c core.Caller) bool { return c.Identity != nil || c.IdentityErr != nil }

// CallerFromToken is [gate.CallerOf] for a token obtained otherwise
// (the web catalog's cookie); tok is "" for none. Session tokens are
// checked here; OIDC tokens of trusted issuers only by CallerOf.
func (g *gate) CallerFromToken(tok string) core.Caller {
	if tok == "" {
		return core.Caller{}
	}
	sum := sha256.Sum256([]byte(tok))
	c := core.Caller{Sum: &sum}
	if g.admin != nil && subtle.ConstantTimeCompare(sum[:], g.admin[:]) == 1 {
		c.Admin = true
	}
	if !c.Admin && ssotoken.Is(tok) {
		// A person's session (jig login --sso) is checked here, so
		// that the web catalog's sign-in takes one too.
		return g.sessionCaller(c, tok)
	}
	return c
}

// ReadAccess decides whether c may read namespace ns. It returns private
// = true when the content needed a token (a gated namespace, or an
// undeclared one read with the admin token), in which case responses say
// "private" and vary on the token headers. The error is an *core.APIError
// (403 FORBIDDEN_NAMESPACE or a 401).
func (g *gate) ReadAccess(c core.Caller, ns string) (private bool, err error) {
	if oidcCaller(c) {
		if g.auth.Load().namespaces[ns].public {
			return false, nil
		}
		if _, err := g.identityAccess(c, ns); err != nil {
			return false, refusedIn(ns, err)
		}
		return true, nil
	}
	r, aerr := g.auth.Load().authorize(ns, c.Sum, g.tokenTime(c))
	if c.Admin {
		return aerr != nil || !r.Public, nil
	}
	if aerr != nil {
		return false, refusedIn(ns, authError(aerr))
	}
	return !r.Public, nil
}

// CanList reports whether c may see namespace ns in discovery.
func (g *gate) CanList(c core.Caller, ns string) bool {
	if c.Admin {
		return true
	}
	if oidcCaller(c) {
		_, err := g.ReadAccess(c, ns)
		return err == nil
	}
	_, err := g.auth.Load().authorize(ns, c.Sum, g.tokenTime(c))
	return err == nil
}

// tokenTime is the time a token of c is checked against: the zero time
// when c sent none, as [AuthConfig.authorize] then never reads it (this
// saves reading the clock on every anonymous read).
func (g *gate) tokenTime(c core.Caller) time.Time {
	if c.Sum == nil {
		return time.Time{}
	}
	return g.now()
}

// TokenKnown reports whether c's token opens anything: it is the admin
// token or a live token of some declared namespace. Every namespace is
// checked, so the time taken does not depend on which one matches.
func (g *gate) TokenKnown(c core.Caller) bool {
	if c.Admin {
		return true
	}
	a := g.auth.Load()
	if c.Sum == nil || a == nil {
		return false
	}
	if oidcCaller(c) {
		if c.IdentityErr != nil {
			return false
		}
		_, anywhere := a.identityScopes("", c.Identity)
		return anywhere != 0
	}
	known := false
	now := g.now()
	for ns := range a.namespaces {
		if g, err := a.authorize(ns, c.Sum, now); err == nil && !g.Public {
			known = true
		}
	}
	return known
}

// Actor implements [core.Gate]: the mark of the first live entry of c's
// token, with the token's id.
func (g *gate) Actor(c core.Caller) string {
	id := core.ReporterOf(c)
	a := g.auth.Load()
	if c.Identity != nil {
		return c.Identity.Summary() + " (" + id + ")"
	}
	if c.Admin || c.Sum == nil || a == nil {
		return id
	}
	now := g.now()
	for i := range a.entries {
		t := &a.entries[i]
		if t.sum == *c.Sum && t.label() != "" && (t.expires.IsZero() || now.Before(t.expires)) {
			return t.label() + " (" + id + ")"
		}
	}
	return id
}

// CensusAccess decides whether c may read the census of ns (GET
// /census/@ns…, the catalog's files projects edit most): the census
// names projects, their origins, branches, commits and edited files, so
// it needs a right of its own, whatever the namespace's read policy: the
// admin token, or a token whose auth.json entry lists ns under "census"
// and that may read ns. A caller who may not read ns gets
// [gate.ReadAccess]'s error, the same as for a namespace that does not
// exist; a reader without the right gets 401 UNAUTHORIZED (no token) or
// 403 INSUFFICIENT_PERMISSIONS, naming the right.
func (g *gate) CensusAccess(c core.Caller, ns string) error {
	if _, err := g.ReadAccess(c, ns); err != nil {
		return err
	}
	if c.Admin || g.auth.Load().mayReadCensus(ns, c.Sum, g.tokenTime(c)) {
		return nil
	}
	if c.Identity != nil {
		if here, _ := g.auth.Load().identityScopes(ns, c.Identity); here.has(ScopeCensusRead) {
			return nil
		}
	}
	need := fmt.Sprintf("the census of %s lists the projects that report to it, so reading it needs the admin token or a token whose auth.json entry lists %q under \"census\" (the census:read right)", ns, ns)
	if c.Sum == nil {
		return refusedIn(ns, core.NewAPIError(wire.CodeUnauthorized, "Authentication required: "+need))
	}
	return refusedIn(ns, core.NewAPIError(wire.CodeInsufficientPerms, "Token does not have census permission for namespace "+ns+": "+need))
}

// ReportAccess decides whether c, who may read ns, may send census
// reports for it: the admin token, or a token with the census:report
// right there (every entry written without "scopes" has it). A token
// this server did not issue gets 401 INVALID_TOKEN (a public namespace
// lets it read), one without the right 403 INSUFFICIENT_PERMISSIONS.
func (g *gate) ReportAccess(c core.Caller, ns string) error {
	if c.Admin || g.auth.Load().mayReport(ns, c.Sum, g.tokenTime(c)) {
		return nil
	}
	if oidcCaller(c) {
		if c.IdentityErr != nil {
			return refusedIn(ns, c.IdentityErr)
		}
		a := g.auth.Load()
		here, anywhere := a.identityScopes(ns, c.Identity)
		if here.has(ScopeCensusReport) || (a.namespaces[ns].public && anywhere.has(ScopeCensusReport)) {
			return nil
		}
	}
	if !g.TokenKnown(c) {
		return refusedIn(ns, core.NewAPIError(wire.CodeInvalidToken,
			"Census reports need a token this server issued (one with the census:report scope for the namespace, or the admin token)."))
	}
	return refusedIn(ns, core.NewAPIError(wire.CodeInsufficientPerms,
		fmt.Sprintf("Token does not have the census:report scope for namespace %s; report with a token whose auth.json entry for %s has it (jig-server token create --namespace %s --scope census:report)", ns, ns, ns)))
}

// refusedIn notes on e, a refusal of access to namespace ns, the
// namespace asked for: the audit log records it with the failed token
// check ([core.Core.AuditRefusal]). It returns e.
func refusedIn(ns string, e *core.APIError) *core.APIError {
	if e != nil {
		e.Namespace = ns
	}
	return e
}

// authError maps the access errors of [AuthConfig.Authorize] to their wire
// form. It returns nil for a nil err and a 500 for anything unexpected.
func authError(err error) *core.APIError {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrForbiddenNamespace):
		return core.NewAPIError(wire.CodeForbiddenNamespace, "Namespace not allowed")
	case errors.Is(err, ErrTokenRequired):
		return core.NewAPIError(wire.CodeUnauthorized, "Authentication token is required")
	case errors.Is(err, ErrInvalidToken):
		return core.NewAPIError(wire.CodeInvalidToken, "Provided token is invalid")
	case errors.Is(err, ErrTokenExpired):
		return core.NewAPIError(wire.CodeTokenExpired, "Authentication token has expired")
	}
	return core.InternalError(err)
}

// uploadCaller refuses, before the body is read, an upload whose caller
// can publish nowhere because of its token: none (401 UNAUTHORIZED), one
// that matches no entry of auth (401 INVALID_TOKEN), one whose entries
// have all expired (401 TOKEN_EXPIRED), or one that may publish to no
// namespace at all (403 INSUFFICIENT_PERMISSIONS). Whether the token may
// publish to the namespace the package names is decided once the manifest
// is read.
func uploadCaller(auth *AuthConfig, who core.Caller, now time.Time) error {
	if who.Sum == nil {
		return core.NewAPIError(wire.CodeUnauthorized,
			"Authentication required for upload. Provide a namespace token or admin token via Authorization or X-Registry-Token.")
	}
	if who.Admin {
		return nil
	}
	if auth == nil {
		return authError(ErrInvalidToken)
	}
	// No namespace is named "": every entry is compared, a live match
	// gives ErrForbiddenNamespace (the token is known), and the time
	// taken does not depend on which entry matches.
	_, err := auth.authorize("", who.Sum, now)
	if !errors.Is(err, ErrForbiddenNamespace) {
		return authError(err)
	}
	if !auth.mayPublish(who.Sum, now) {
		return core.NewAPIError(wire.CodeInsufficientPerms,
			"Token does not have publish permission for any namespace; publish with a token whose auth.json entry has \"publish\": true")
	}
	return nil
}

// Upload decides an upload by c with one auth.json for the whole request
// (see [core.Gate]): the error refuses it before its body is read
// ([uploadCaller]); publishTo then decides the namespace the package
// names and returns the mark recorded with the version (who published
// it: "admin" or the token's mark). A caller who may not read the
// namespace gets the same answer whether it is gated or not declared
// (DESIGN 3).
func (g *gate) Upload(c core.Caller) (publishTo func(ns string) (mark string, err error), err error) {
	auth := g.auth.Load()
	if oidcCaller(c) {
		return g.identityUpload(auth, c)
	}
	if err := uploadCaller(auth, c, g.now()); err != nil {
		return nil, err
	}
	return func(ns string) (mark string, err error) {
		defer func() {
			if ae, ok := errors.AsType[*core.APIError](err); ok {
				refusedIn(ns, ae)
			}
		}()
		if c.Admin {
			if !auth.Declared(ns) {
				return "", core.NewAPIError(wire.CodeNamespaceNotAllowed, fmt.Sprintf("Namespace %s is not allowed", ns))
			}
			return "admin", nil
		}
		r, err := auth.authorize(ns, c.Sum, g.now())
		switch {
		case errors.Is(err, ErrForbiddenNamespace):
			return "", core.NewAPIError(wire.CodeNamespaceNotAllowed, "Namespace is not allowed for this token")
		case err != nil:
			return "", authError(err)
		case r.Public:
			return "", core.NewAPIError(wire.CodeAnonymousUpload,
				"Anonymous namespaces do not allow uploads. Use an admin token or configure namespace tokens.")
		case !r.Publish:
			return "", core.NewAPIError(wire.CodeInsufficientPerms,
				fmt.Sprintf("Token does not have publish permission for namespace %s", ns))
		}
		return r.Mark, nil
	}, nil
}

// identityUpload is [gate.Upload] for a caller with an OIDC token: its
// claim rules decide, as token entries do for tokens. The mark recorded
// is the identity's summary ("acme/templates on main, workflow
// release.yml") and the rule's name.
func (g *gate) identityUpload(auth *AuthConfig, c core.Caller) (func(ns string) (string, error), error) {
	if c.IdentityErr != nil {
		return nil, c.IdentityErr
	}
	_, anywhere := auth.identityScopes("", c.Identity)
	switch {
	case anywhere == 0:
		return nil, core.NewAPIError(wire.CodeInvalidToken, "No claim rule of the server's auth.json matches this identity token")
	case !anywhere.has(ScopePublish):
		return nil, core.NewAPIError(wire.CodeInsufficientPerms,
			"No claim rule of the server's auth.json lets this identity publish; ask the operator for a rule with the publish scope")
	}
	return func(ns string) (mark string, err error) {
		defer func() {
			if ae, ok := errors.AsType[*core.APIError](err); ok {
				refusedIn(ns, ae)
			}
		}()
		if auth.namespaces[ns].public {
			return "", core.NewAPIError(wire.CodeAnonymousUpload,
				"Anonymous namespaces do not allow uploads. Use an admin token or configure namespace tokens.")
		}
		here, _ := auth.identityScopes(ns, c.Identity)
		switch {
		case here == 0:
			return "", core.NewAPIError(wire.CodeNamespaceNotAllowed, "Namespace is not allowed for this token")
		case !here.has(ScopePublish):
			return "", core.NewAPIError(wire.CodeInsufficientPerms,
				fmt.Sprintf("Token does not have publish permission for namespace %s", ns))
		}
		mark = c.Identity.Record()
		if name := auth.identityLabel(ns, c.Identity); name != "" {
			mark += ", rule " + name
		}
		return mark, nil
	}, nil
}
