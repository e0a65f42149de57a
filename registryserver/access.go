package registryserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"time"

	"github.com/jigkit/jig/registry/wire"
)

// caller is who sent a request, as far as access decisions go. The token
// itself is not kept, only its digest.
type caller struct {
	sum   *[sha256.Size]byte // nil: no token sent
	admin bool
}

// callerOf extracts and hashes the request's token and checks it against
// the admin token in constant time.
func (h *Handler) callerOf(r *http.Request) caller {
	return h.callerFromToken(tokenFromRequest(r))
}

// callerFromToken is [Handler.callerOf] for a token obtained otherwise
// (the web catalog's cookie); tok is "" for none.
func (h *Handler) callerFromToken(tok string) caller {
	if tok == "" {
		return caller{}
	}
	sum := sha256.Sum256([]byte(tok))
	c := caller{sum: &sum}
	if h.admin != nil && subtle.ConstantTimeCompare(sum[:], h.admin[:]) == 1 {
		c.admin = true
	}
	return c
}

// readAccess decides whether c may read namespace ns. It returns private
// = true when the content needed a token (a gated namespace, or an
// undeclared one read with the admin token), in which case responses say
// "private" and vary on the token headers. The error is an *apiError
// (403 FORBIDDEN_NAMESPACE or a 401).
func (h *Handler) readAccess(c caller, ns string) (private bool, err error) {
	g, aerr := h.authConfig().authorize(ns, c.sum, h.tokenTime(c))
	if c.admin {
		return aerr != nil || !g.Public, nil
	}
	if aerr != nil {
		return false, authError(aerr)
	}
	return !g.Public, nil
}

// canList reports whether c may see namespace ns in discovery.
func (h *Handler) canList(c caller, ns string) bool {
	if c.admin {
		return true
	}
	_, err := h.authConfig().authorize(ns, c.sum, h.tokenTime(c))
	return err == nil
}

// tokenTime is the time a token of c is checked against: the zero time
// when c sent none, as [AuthConfig.authorize] then never reads it (this
// saves reading the clock on every anonymous read).
func (h *Handler) tokenTime(c caller) time.Time {
	if c.sum == nil {
		return time.Time{}
	}
	return h.now()
}

// tokenKnown reports whether c's token opens anything: it is the admin
// token or a live token of some declared namespace. Every namespace is
// checked, so the time taken does not depend on which one matches.
func (h *Handler) tokenKnown(c caller) bool {
	if c.admin {
		return true
	}
	a := h.authConfig()
	if c.sum == nil || a == nil {
		return false
	}
	known := false
	now := h.now()
	for ns := range a.namespaces {
		if g, err := a.authorize(ns, c.sum, now); err == nil && !g.Public {
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
func (h *Handler) censusAccess(c caller, ns string) error {
	if _, err := h.readAccess(c, ns); err != nil {
		return err
	}
	if c.admin || h.authConfig().mayReadCensus(ns, c.sum, h.tokenTime(c)) {
		return nil
	}
	need := fmt.Sprintf("the census of %s lists the projects that report to it, so reading it needs the admin token or a token whose auth.json entry lists %q under \"census\" (the census:read right)", ns, ns)
	if c.sum == nil {
		return newAPIError(wire.CodeUnauthorized, "Authentication required: "+need)
	}
	return newAPIError(wire.CodeInsufficientPerms, "Token does not have census permission for namespace "+ns+": "+need)
}
