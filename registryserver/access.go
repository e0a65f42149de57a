package registryserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/core"
)

// callerOf extracts and hashes the request's token and checks it against
// the admin token in constant time.
func (h *Handler) callerOf(r *http.Request) core.Caller {
	return h.callerFromToken(tokenFromRequest(r))
}

// callerFromToken is [Handler.callerOf] for a token obtained otherwise
// (the web catalog's cookie); tok is "" for none.
func (h *Handler) callerFromToken(tok string) core.Caller {
	if tok == "" {
		return core.Caller{}
	}
	sum := sha256.Sum256([]byte(tok))
	c := core.Caller{Sum: &sum}
	if h.admin != nil && subtle.ConstantTimeCompare(sum[:], h.admin[:]) == 1 {
		c.Admin = true
	}
	return c
}

// readAccess decides whether c may read namespace ns. It returns private
// = true when the content needed a token (a gated namespace, or an
// undeclared one read with the admin token), in which case responses say
// "private" and vary on the token headers. The error is an *apiError
// (403 FORBIDDEN_NAMESPACE or a 401).
func (h *Handler) readAccess(c core.Caller, ns string) (private bool, err error) {
	g, aerr := h.authConfig().authorize(ns, c.Sum, h.tokenTime(c))
	if c.Admin {
		return aerr != nil || !g.Public, nil
	}
	if aerr != nil {
		return false, authError(aerr)
	}
	return !g.Public, nil
}

// canList reports whether c may see namespace ns in discovery.
func (h *Handler) canList(c core.Caller, ns string) bool {
	if c.Admin {
		return true
	}
	_, err := h.authConfig().authorize(ns, c.Sum, h.tokenTime(c))
	return err == nil
}

// tokenTime is the time a token of c is checked against: the zero time
// when c sent none, as [AuthConfig.authorize] then never reads it (this
// saves reading the clock on every anonymous read).
func (h *Handler) tokenTime(c core.Caller) time.Time {
	if c.Sum == nil {
		return time.Time{}
	}
	return h.Now()
}

// tokenKnown reports whether c's token opens anything: it is the admin
// token or a live token of some declared namespace. Every namespace is
// checked, so the time taken does not depend on which one matches.
func (h *Handler) tokenKnown(c core.Caller) bool {
	if c.Admin {
		return true
	}
	a := h.authConfig()
	if c.Sum == nil || a == nil {
		return false
	}
	known := false
	now := h.Now()
	for ns := range a.namespaces {
		if g, err := a.authorize(ns, c.Sum, now); err == nil && !g.Public {
			known = true
		}
	}
	return known
}

// censusAccess decides whether c may read the census of ns (GET
// /census/@ns…, the catalog's files projects edit most): the census
// names projects, their origins, branches, commits and edited files, so
// it needs a right of its own, whatever the namespace's read policy: the
// admin token, or a token whose auth.json entry lists ns under "census"
// and that may read ns. A caller who may not read ns gets
// [Handler.readAccess]'s error, the same as for a namespace that does not
// exist; a reader without the right gets 401 UNAUTHORIZED (no token) or
// 403 INSUFFICIENT_PERMISSIONS, naming the right.
func (h *Handler) censusAccess(c core.Caller, ns string) error {
	if _, err := h.readAccess(c, ns); err != nil {
		return err
	}
	if c.Admin || h.authConfig().mayReadCensus(ns, c.Sum, h.tokenTime(c)) {
		return nil
	}
	need := fmt.Sprintf("the census of %s lists the projects that report to it, so reading it needs the admin token or a token whose auth.json entry lists %q under \"census\" (the census:read right)", ns, ns)
	if c.Sum == nil {
		return core.NewAPIError(wire.CodeUnauthorized, "Authentication required: "+need)
	}
	return core.NewAPIError(wire.CodeInsufficientPerms, "Token does not have census permission for namespace "+ns+": "+need)
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
