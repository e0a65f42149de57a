// Package oidctrust checks OIDC ID tokens (a CI job's identity token, a
// person's token from the organisation's issuer) against the issuers
// auth.json trusts: discovery and JWKS fetched with bounded bodies and
// timeouts and cached, the keys refreshed on an unknown key id at most
// once per refresh interval, the signature, iss, aud, exp, nbf and iat
// checked by github.com/coreos/go-oidc with a small clock skew. Only
// asymmetric algorithms are accepted: "none", HMAC and unknown ones are
// refused before any key is looked at. A token whose issuer auth.json
// does not trust is refused without contacting anything.
package oidctrust

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
)

// Limits of the verifier.
const (
	// MaxTokenBytes bounds the size of a token that is parsed at all.
	MaxTokenBytes = 16 << 10
	// maxDocBytes bounds a discovery document or a JWKS.
	maxDocBytes = 256 << 10
	// fetchTimeout bounds one fetch of a discovery document or a JWKS.
	fetchTimeout = 5 * time.Second
	// Skew is the clock difference allowed between the issuer and this
	// server, for exp and iat.
	Skew = 30 * time.Second
	// MinRefresh is the least time between two fetches of an issuer's
	// keys for unknown key ids: a stream of tokens with made-up key ids
	// costs at most one fetch per interval.
	MinRefresh = 30 * time.Second
	// retryAfter is how long a failed discovery is not retried: tokens of
	// an issuer that is down are refused at once meanwhile.
	retryAfter = 10 * time.Second
	// maxKeys bounds the keys kept of one JWKS.
	maxKeys = 64
)

// Algorithms are the signature algorithms accepted: asymmetric only.
var Algorithms = []string{
	oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512,
	oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA,
}

// Errors of [Verifier.Verify].
var (
	// ErrUnavailable: the issuer's discovery document or keys could not
	// be fetched (down, too slow, too large, malformed); the token is
	// refused.
	ErrUnavailable = errors.New("the token's issuer could not be reached to check it")
	// ErrExpired: the token's exp has passed (beyond the skew).
	ErrExpired = errors.New("the identity token has expired")
)

// InvalidError refuses a token that is not a valid token of the issuer
// for the audience; Reason says why, for the caller (it names nothing
// of the server's configuration but the issuer and the audience the
// caller already sent).
type InvalidError struct{ Reason string }

func (e *InvalidError) Error() string { return "invalid identity token: " + e.Reason }

func invalid(format string, args ...any) error {
	return &InvalidError{Reason: fmt.Sprintf(format, args...)}
}

// Issuer is a trusted issuer: its URL (the iss of its tokens) and the
// audience its tokens must name.
type Issuer struct {
	URL      string
	Audience string
}

// Header and payload fields read before the signature is checked, only to
// pick the issuer.
type unverified struct {
	Alg string `json:"alg"`
	Iss string `json:"iss"`
}

// LooksLikeJWT reports whether tok has the shape of a compact JWS: three
// base64url parts whose first decodes to a JSON object naming an "alg".
// Static tokens (jig_…, or anything an operator wrote in auth.json) do
// not.
func LooksLikeJWT(tok string) bool {
	if len(tok) > MaxTokenBytes || strings.Count(tok, ".") != 2 {
		return false
	}
	h, _, _ := strings.Cut(tok, ".")
	var u unverified
	b, err := base64.RawURLEncoding.DecodeString(h)
	return err == nil && json.Unmarshal(b, &u) == nil && u.Alg != ""
}

// UnverifiedIssuer returns the iss claim of tok without checking
// anything: only to choose which trusted issuer checks it.
func UnverifiedIssuer(tok string) (string, bool) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || len(tok) > MaxTokenBytes {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	var u unverified
	if err != nil || json.Unmarshal(b, &u) != nil || u.Iss == "" {
		return "", false
	}
	return u.Iss, true
}

// Verifier checks tokens of trusted issuers; it caches each issuer's
// discovery document and keys. It is safe for concurrent use. The zero
// value is not usable; see [New].
type Verifier struct {
	client *http.Client
	now    func() time.Time

	mu      sync.Mutex
	issuers map[string]*issuerState
}

// New returns a Verifier that fetches with client (nil: a client with
// the fetch timeout and no proxy from the environment is not assumed; the
// default transport is used) and reads the time from now (nil:
// time.Now).
func New(client *http.Client, now func() time.Time) *Verifier {
	if client == nil {
		client = &http.Client{Timeout: fetchTimeout}
	}
	if now == nil {
		now = time.Now
	}
	c := *client
	c.Transport = limitedTransport{base: client.Transport}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if c.Timeout == 0 || c.Timeout > fetchTimeout {
		c.Timeout = fetchTimeout
	}
	return &Verifier{client: &c, now: now, issuers: map[string]*issuerState{}}
}

// issuerState is what is cached of one issuer: its JWKS URL and keys.
type issuerState struct {
	mu         sync.Mutex // held while fetching, so one fetch serves everyone waiting
	jwksURL    string
	keys       map[string]jose.JSONWebKey // by kid
	fetched    time.Time                  // last fetch of the keys
	failedAt   time.Time                  // last failed discovery or fetch
	lastFailed error
}

func (v *Verifier) state(url string) *issuerState {
	v.mu.Lock()
	defer v.mu.Unlock()
	s := v.issuers[url]
	if s == nil {
		s = &issuerState{}
		v.issuers[url] = s
	}
	return s
}

// Verify checks raw, a token of iss, and returns its claims. The errors
// are [ErrUnavailable], [ErrExpired] and [*InvalidError].
func (v *Verifier) Verify(ctx context.Context, iss Issuer, raw string) (map[string]any, error) {
	if len(raw) > MaxTokenBytes {
		return nil, invalid("the token is larger than %d bytes", MaxTokenBytes)
	}
	// The algorithm is checked before anything is fetched: a token with
	// "none" or HMAC costs nothing.
	if _, err := jose.ParseSigned(raw, algorithms()); err != nil {
		return nil, invalid("not a JWT signed with an asymmetric algorithm (%s)", strings.Join(Algorithms, ", "))
	}
	ks := &keySet{v: v, iss: iss, s: v.state(iss.URL)}
	skewed := func() time.Time { return v.now().Add(-Skew) }
	verifier := oidc.NewVerifier(iss.URL, ks, &oidc.Config{ClientID: iss.Audience, SupportedSigningAlgs: Algorithms, Now: skewed})
	tok, err := verifier.Verify(ctx, raw)
	var expired *oidc.TokenExpiredError
	switch {
	case ks.unavailable != nil:
		return nil, ks.unavailable
	case errors.As(err, &expired):
		return nil, ErrExpired
	case err != nil:
		return nil, invalid("%s", strings.TrimPrefix(err.Error(), "oidc: "))
	}
	if !tok.IssuedAt.IsZero() && tok.IssuedAt.After(v.now().Add(Skew)) {
		return nil, invalid("it was issued in the future (iat %s)", tok.IssuedAt.UTC().Format(time.RFC3339))
	}
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return nil, invalid("its claims are not a JSON object")
	}
	return claims, nil
}

func algorithms() []jose.SignatureAlgorithm {
	out := make([]jose.SignatureAlgorithm, len(Algorithms))
	for i, a := range Algorithms {
		out[i] = jose.SignatureAlgorithm(a)
	}
	return out
}

// keySet is the [oidc.KeySet] of one issuer, backed by the cache.
type keySet struct {
	v   *Verifier
	iss Issuer
	s   *issuerState
	// unavailable is the error (wrapping ErrUnavailable) of a fetch that
	// failed, as go-oidc keeps only its text.
	unavailable error
}

// VerifySignature checks the signature of jwt with the issuer's key of
// its kid, fetching the keys when the kid is unknown (at most once per
// MinRefresh).
func (k *keySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	jws, err := jose.ParseSigned(jwt, algorithms())
	if err != nil || len(jws.Signatures) != 1 {
		return nil, errors.New("malformed jwt")
	}
	kid := jws.Signatures[0].Header.KeyID
	key, err := k.key(ctx, kid)
	if errors.Is(err, ErrUnavailable) {
		k.unavailable = err
	}
	if err != nil {
		return nil, err
	}
	payload, err := jws.Verify(key)
	if err != nil {
		return nil, errors.New("the signature does not verify with the issuer's key " + quoteShort(kid))
	}
	return payload, nil
}

func quoteShort(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// key returns the public key of kid.
func (k *keySet) key(ctx context.Context, kid string) (any, error) {
	s := k.s
	s.mu.Lock()
	defer s.mu.Unlock()
	now := k.v.now()
	if key, ok := s.keys[kid]; ok {
		return key.Key, nil
	}
	if !s.fetched.IsZero() && now.Sub(s.fetched) < MinRefresh {
		return nil, errors.New("no key of the issuer has the id " + quoteShort(kid))
	}
	if s.lastFailed != nil && now.Sub(s.failedAt) < retryAfter {
		return nil, s.lastFailed
	}
	if err := k.fetch(ctx); err != nil {
		s.failedAt, s.lastFailed = now, err
		return nil, err
	}
	s.fetched, s.lastFailed = now, nil
	if key, ok := s.keys[kid]; ok {
		return key.Key, nil
	}
	return nil, errors.New("no key of the issuer has the id " + quoteShort(kid))
}

// fetch runs discovery (once) and fetches the keys. Its errors wrap
// ErrUnavailable.
func (k *keySet) fetch(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	s := k.s
	if s.jwksURL == "" {
		p, err := oidc.NewProvider(oidc.ClientContext(ctx, k.v.client), k.iss.URL)
		if err != nil {
			return fmt.Errorf("%w: discovery of %s: %v", ErrUnavailable, k.iss.URL, shortErr(err))
		}
		var doc struct {
			JWKS string `json:"jwks_uri"`
		}
		if err := p.Claims(&doc); err != nil || !strings.HasPrefix(doc.JWKS, "http") {
			return fmt.Errorf("%w: the discovery document of %s names no jwks_uri", ErrUnavailable, k.iss.URL)
		}
		s.jwksURL = doc.JWKS
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.jwksURL, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	resp, err := k.v.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: keys of %s: %v", ErrUnavailable, k.iss.URL, shortErr(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: keys of %s: %s", ErrUnavailable, k.iss.URL, resp.Status)
	}
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		return fmt.Errorf("%w: keys of %s: %v", ErrUnavailable, k.iss.URL, shortErr(err))
	}
	keys := map[string]jose.JSONWebKey{}
	for _, key := range set.Keys {
		if len(keys) == maxKeys {
			break
		}
		// Public asymmetric signing keys only: a symmetric ("oct") key
		// in a JWKS would let anyone who read it sign.
		if !key.IsPublic() || !key.Valid() || (key.Use != "" && key.Use != "sig") {
			continue
		}
		keys[key.KeyID] = key
	}
	s.keys = keys
	return nil
}

func shortErr(err error) string {
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return msg
}

// limitedTransport refuses a response body beyond maxDocBytes.
type limitedTransport struct{ base http.RoundTripper }

func (t limitedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{rc: resp.Body, left: maxDocBytes}
	return resp, nil
}

type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

var errTooLarge = fmt.Errorf("the document is larger than %d bytes", maxDocBytes)

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a document of exactly the limit from a
		// larger one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, errTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
