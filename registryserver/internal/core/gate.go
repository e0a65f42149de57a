package core

import (
	"crypto/sha256"
	"net/http"
	"strings"
	"time"

	"github.com/jigkit/jig/registry/wire"
)

// Caller is who sent a request, as far as access decisions go. The token
// itself is not kept, only its digest.
type Caller struct {
	Sum   *[sha256.Size]byte // nil: no token sent
	Admin bool
	// Identity is set when the token is an OIDC token of an issuer
	// auth.json trusts, and it verified.
	Identity *Identity
	// IdentityErr is set when the token is an OIDC token of a trusted
	// issuer that did not verify (401 INVALID_TOKEN, TOKEN_EXPIRED) or
	// whose issuer could not be reached (503 ISSUER_UNAVAILABLE): every
	// decision that needs the token refuses with it.
	IdentityErr *APIError
	// Expires is when a session token (jig login --sso) ends; nil for
	// any other token.
	Expires *time.Time
}

// Gate makes the access decisions for the features: who sent a request
// and what it may read, list, census or publish. The router implements it
// from its auth configuration; a feature never reads that configuration
// itself. Errors are [*APIError]s to return as they are: a caller who may
// not read a namespace gets the same answer whether it is gated or
// absent.
type Gate interface {
	// CallerOf extracts and hashes the request's token.
	CallerOf(r *http.Request) Caller
	// CallerFromToken is CallerOf for a token obtained otherwise (the web
	// catalog's cookie); tok is "" for none.
	CallerFromToken(tok string) Caller
	// ReadAccess decides whether c may read namespace ns; private is true
	// when the content needed a token (responses then say "private").
	ReadAccess(c Caller, ns string) (private bool, err error)
	// CanList reports whether c may see namespace ns in discovery.
	CanList(c Caller, ns string) bool
	// Actor names c in the audit log: "admin", "anonymous", or its
	// token's mark and id ("CI (token:0123456789ab)"), never the token.
	Actor(c Caller) string
	// TokenKnown reports whether c's token opens anything.
	TokenKnown(c Caller) bool
	// CensusAccess decides whether c may read the census of ns.
	CensusAccess(c Caller, ns string) error
	// ReportAccess decides, after ReadAccess allowed it, whether c may
	// send census reports for ns: the admin token or a token with the
	// census:report right there.
	ReportAccess(c Caller, ns string) error
	// Declared reports whether the configuration declares ns: a declared
	// namespace exists even while it holds nothing.
	Declared(ns string) bool
	// Upload decides an upload by c before its body is read; publishTo
	// then decides the namespace the package names, with the same
	// configuration, and returns the mark recorded with the version.
	Upload(c Caller) (publishTo func(ns string) (mark string, err error), err error)
}

// RequireAdmin refuses a caller who is not the admin token, the same way
// on every admin route: 401 UNAUTHORIZED without a token, 403
// INSUFFICIENT_PERMISSIONS with any other, known or not (no answer tells
// a token nobody issued from a reader's). what names the action
// ("publishing presets", "reading the audit log").
func RequireAdmin(who Caller, what string) error {
	switch {
	case who.Sum == nil:
		return NewAPIError(wire.CodeUnauthorized, "Authentication required: "+what+" needs the admin token.")
	case !who.Admin:
		return NewAPIError(wire.CodeInsufficientPerms, strings.ToUpper(what[:1])+what[1:]+" requires the admin token")
	}
	return nil
}
