package registryserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/internal/oidctrust"
	"github.com/jigkit/jig/registryserver/internal/ssotoken"
	"github.com/jigkit/jig/registryserver/state"
)

// msgSSOOff answers the SSO routes of a server without an "sso" section.
const msgSSOOff = `This server has no SSO issuer for people (auth.json has no "sso" section); use a token of the server instead`

// getSSO answers GET /auth/sso: the issuer, the public client id and the
// scopes a client runs the device grant with.
func (h *Handler) getSSO(c echo.Context) error {
	info, ok := h.authConfig().SSO()
	if !ok {
		return core.NewAPIError(wire.CodeNotFound, msgSSOOff)
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-cache")
	return c.JSON(http.StatusOK, info)
}

// postSSOToken answers POST /auth/sso/token: it checks the issuer's ID
// token as trusted publishing checks a CI's (go-oidc: signature, iss,
// aud = the client id, exp, nbf, iat), and issues a session token for the
// person's subject and groups, valid for the "sso" section's
// tokenLifetime. The rights come from auth.json's rules at every request,
// not from the token. A person whose groups no rule names is refused (403
// FORBIDDEN): the answer names no namespace.
func (h *Handler) postSSOToken(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	a := h.authConfig()
	if a == nil || a.sso == nil {
		return core.NewAPIError(wire.CodeNotFound, msgSSOOff)
	}
	var req wire.SSOTokenRequest
	body := http.MaxBytesReader(c.Response(), c.Request().Body, wire.MaxSSOTokenRequest)
	if err := json.NewDecoder(body).Decode(&req); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return core.InternalError(err)
		}
		return core.NewAPIError(wire.CodeBadRequest, `The body must be {"idToken": "<the issuer's ID token>"}`)
	}
	if strings.TrimSpace(req.IDToken) == "" {
		return core.NewAPIError(wire.CodeBadRequest, `The body must be {"idToken": "<the issuer's ID token>"}; idToken is empty`)
	}
	claims, err := h.gate.oidc.Verify(c.Request().Context(), a.sso.ssoIssuer(), req.IDToken)
	if err != nil {
		if errors.Is(err, oidctrust.ErrExpired) {
			return core.NewAPIError(wire.CodeTokenExpired, "The ID token has expired; log in at the issuer again")
		}
		return identityError(err)
	}
	now := h.core.Now()
	s := a.sso.sessionClaims(claims, now)
	if s.Subject == "" {
		return core.NewAPIError(wire.CodeInvalidToken, "Invalid identity token: it names no subject (sub)")
	}
	id := a.sso.sessionIdentity(s)
	sum := sha256.Sum256([]byte(req.IDToken))
	who := core.Caller{Sum: &sum, Identity: id}
	rights := a.identityRights(id)
	ev := state.Event{Action: core.ActionSSOLogin, Target: id.Person,
		Detail: fmt.Sprintf("%s, groups %s, rights %s", id.Record(), groupList(s.Groups), rightsSummary(rights))}
	if len(rights) == 0 {
		err := core.NewAPIError(wire.CodeForbidden, fmt.Sprintf(
			"No rule of this server's auth.json gives %s (groups %s) any right; ask the server's operator to map one of your groups to a namespace",
			core.ShortText(id.Person), core.ShortText(groupList(s.Groups))))
		ev.Outcome = core.OutcomeOf(err)
		h.core.Audit(c, who, ev)
		return err
	}
	tok, err := ssotoken.Sign(h.gate.ssoKey, s)
	if err != nil {
		return core.NewAPIError(wire.CodeBadRequest, err.Error())
	}
	ev.Outcome = core.OutcomeOK
	h.core.Audit(c, who, ev)
	exp := time.Unix(s.Expires, 0).UTC()
	return c.JSON(http.StatusOK, wire.SSOToken{Token: tok, ExpiresAt: exp,
		Whoami: wire.Whoami{Kind: wire.WhoPerson, Person: id.Person, Issuer: s.Issuer, Subject: s.Subject,
			Groups: s.Groups, Expires: &exp, Namespaces: rights}})
}

// getWhoami answers GET /auth/whoami: who the request's token is, and the
// namespaces it opens beyond public reads with their scopes. A token
// that does not check is refused as on any gated route.
func (h *Handler) getWhoami(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	c.Response().Header().Set(echo.HeaderVary, "Authorization, X-Registry-Token")
	who := h.core.CallerOf(c.Request())
	a := h.authConfig()
	out := wire.Whoami{Kind: wire.WhoAnonymous, Namespaces: wire.Rights{}}
	switch {
	case who.Admin:
		out.Kind = wire.WhoAdmin
	case who.IdentityErr != nil:
		return who.IdentityErr
	case who.Identity != nil:
		id := who.Identity
		out.Kind, out.Issuer, out.Subject, out.Person = wire.WhoIdentity, id.Issuer, id.Subject, id.Person
		if id.Person != "" {
			out.Kind = wire.WhoPerson
			if a != nil && a.sso != nil {
				out.Groups = sessionGroups(id, a.sso.groupsClaim)
			}
			if who.Expires != nil {
				exp := who.Expires.UTC()
				out.Expires = &exp
			}
		}
		out.Namespaces = a.identityRights(id)
	case who.Sum != nil:
		out.Kind = wire.WhoToken
		out.Namespaces = a.tokenRights(who.Sum, h.core.Now())
		if len(out.Namespaces) == 0 {
			return authError(ErrInvalidToken)
		}
	}
	return c.JSON(http.StatusOK, out)
}

// sessionCaller is [gate.CallerOf] for a session token (jig login
// --sso): checked with the server's SSO key; the caller gets the
// person's identity, or IdentityErr (401 INVALID_TOKEN, TOKEN_EXPIRED).
// A token signed for another issuer than the "sso" section's now (the
// section changed) is invalid.
func (g *gate) sessionCaller(c core.Caller, tok string) core.Caller {
	a := g.auth.Load()
	s, err := ssotoken.Parse(g.ssoKey, tok, g.now())
	switch {
	case errors.Is(err, ssotoken.ErrExpired):
		c.IdentityErr = core.NewAPIError(wire.CodeTokenExpired, "The SSO session has expired; renew it with the issuer (a client with its refresh token does so by itself), or log in at the issuer again")
	case err != nil || a == nil || a.sso == nil || s.Issuer != a.sso.issuer:
		c.IdentityErr = core.NewAPIError(wire.CodeInvalidToken, "Provided token is invalid")
	default:
		c.Identity = a.sso.sessionIdentity(s)
		exp := time.Unix(s.Expires, 0)
		c.Expires = &exp
	}
	return c
}

// sessionGroups are the groups of a session identity, as its claims keep
// them.
func sessionGroups(id *core.Identity, claim string) []string {
	var out []string
	if list, ok := id.Claims[claim].([]any); ok {
		for _, g := range list {
			if s, ok := g.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// identityRights maps each namespace whose rules give id scopes to them.
// Each rule is matched once: the cost follows the rules, not the
// namespaces of the file.
func (a *AuthConfig) identityRights(id *core.Identity) wire.Rights {
	out := wire.Rights{}
	if a == nil || id == nil {
		return out
	}
	sets := map[int]scopeSet{}
	for i := range a.rules {
		r := &a.rules[i]
		if r.issuer == id.Issuer && r.matches(id.Claims) {
			sets[r.ns] |= r.scopes
		}
	}
	for ns, set := range sets {
		out[a.names[ns]] = scopeNames(set)
	}
	return out
}

// tokenRights maps each namespace where the token whose digest is sum
// has a live entry to the entry's scopes (and "census:read" where its
// "census" list names a namespace it may read). Every entry is compared
// in constant time; the namespaces of the file are not walked.
func (a *AuthConfig) tokenRights(sum *[32]byte, now time.Time) wire.Rights {
	out := wire.Rights{}
	if a == nil || sum == nil {
		return out
	}
	sets := map[int]scopeSet{}
	var census []string
	for i := range a.entries {
		t := &a.entries[i]
		eq := subtle.ConstantTimeCompare(sum[:], t.sum[:]) == 1
		if eq && (t.expires.IsZero() || now.Before(t.expires)) {
			sets[t.ns] |= t.scopes
			census = append(census, t.census...)
		}
	}
	for _, ns := range census {
		r, ok := a.namespaces[ns]
		if _, reads := sets[r.id]; ok && (reads || r.public) {
			sets[r.id] |= scopeBit(ScopeCensusRead)
		}
	}
	for id, set := range sets {
		out[a.names[id]] = scopeNames(set)
	}
	return out
}

func scopeNames(set scopeSet) []string {
	var out []string
	for _, s := range set.list() {
		out = append(out, string(s))
	}
	return out
}

// groupList is "[a, b]" for messages and the audit log.
func groupList(groups []string) string {
	return "[" + strings.Join(groups, ", ") + "]"
}

// rightsSummary is "@team (read, publish); @docs (read)", or "none".
func rightsSummary(r wire.Rights) string {
	if len(r) == 0 {
		return "none"
	}
	names := r.Namespaces()
	parts := make([]string, len(names))
	for i, ns := range names {
		parts[i] = ns + " (" + strings.Join(r[ns], ", ") + ")"
	}
	return strings.Join(parts, "; ")
}
