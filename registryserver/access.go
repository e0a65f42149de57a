package registryserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
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
	tok := tokenFromRequest(r)
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
	g, aerr := h.auth.authorize(ns, c.sum, h.now())
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
	_, err := h.auth.authorize(ns, c.sum, h.now())
	return err == nil
}
