// Package oidctest runs a real OpenID Connect provider on loopback for
// tests: zitadel/oidc's op package serving discovery
// (/.well-known/openid-configuration) and the JWKS (/keys) from an
// in-memory storage, with a signing key that tests can rotate, and an
// off switch that makes the issuer unreachable. Tokens are signed with
// the provider's own current key, so the server under test finds it in
// the provider's JWKS as it would a CI's.
//
// It also runs RFC 8628's device authorization grant for people (jig
// login --sso) with the public client [ClientID]: ID tokens carry the
// person's groups ([Provider.SetGroups]) when the "groups" scope is asked
// for, refresh tokens come with "offline_access", and a test plays the
// person at the verification page: POST [ApprovePath] or [DenyPath] with
// the form fields user_code (and user, for an approval), or
// [Provider.Approve] and [Provider.Deny].
package oidctest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// ClientID is the provider's public client with the device grant and
// refresh tokens (no secret), as an organisation registers jig's.
const ClientID = "jig-cli"

// User is the subject of the provider's person with a verified e-mail
// ([UserEmail]); it starts in no group.
const (
	User      = "id1"
	UserEmail = "test-user@zitadel.ch"
)

// The verification page of the device grant (its verification_uri) and
// the test's stand-ins for the person's choice there.
const (
	DevicePath  = "/device"
	ApprovePath = "/device/approve"
	DenyPath    = "/device/deny"
)

// Audience is the audience of the tokens [Provider.Token] makes unless
// the claims name another.
const Audience = "https://jig.test"

// Provider is an OIDC issuer on loopback.
type Provider struct {
	// URL is the issuer: the iss of its tokens and the base of its
	// discovery document.
	URL  string
	st   *keyStorage
	down atomic.Bool
	// Fetches counts the requests the provider answered or refused
	// (discovery and keys included).
	Fetches atomic.Int64
}

// New starts a provider; it stops when the test ends.
func New(t testing.TB) *Provider {
	t.Helper()
	p, stop, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return p
}

// Start starts a provider outside a testing.TB (a testscript command);
// stop shuts it down.
func Start() (p *Provider, stop func(), err error) {
	srv := httptest.NewUnstartedServer(nil)
	p = &Provider{URL: "http://" + srv.Listener.Addr().String()}
	clients := map[string]*storage.Client{ClientID: storage.NativeClient(ClientID)}
	p.st = &keyStorage{Storage: storage.NewStorageWithClients(storage.NewUserStore(p.URL), clients), groups: map[string][]string{}, codes: make(chan string, 16)}
	p.st.rotate()
	prov, err := op.NewProvider(&op.Config{CryptoKey: sha256.Sum256([]byte("oidctest")), CodeMethodS256: true, GrantTypeRefreshToken: true,
		DeviceAuthorization: op.DeviceAuthorizationConfig{Lifetime: 5 * time.Minute, PollInterval: time.Second,
			UserFormPath: DevicePath, UserCode: op.UserCodeBase20}},
		p.st, op.StaticIssuer(p.URL), op.WithAllowInsecure())
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.Fetches.Add(1)
		if p.down.Load() {
			http.Error(w, "down for the test", http.StatusServiceUnavailable)
			return
		}
		switch r.URL.Path {
		case ApprovePath, DenyPath:
			p.choose(w, r)
			return
		}
		prov.ServeHTTP(w, r)
	})
	srv.Start()
	return p, srv.Close, nil
}

// choose answers POST ApprovePath and DenyPath: the person approves (as
// the form's user) or denies the code user_code.
func (p *Provider) choose(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		http.Error(w, "POST user_code (and user)", http.StatusBadRequest)
		return
	}
	code := r.PostForm.Get("user_code")
	var err error
	if r.URL.Path == ApprovePath {
		err = p.Approve(code, r.PostForm.Get("user"))
	} else {
		err = p.Deny(code)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	fmt.Fprintln(w, "done")
}

// Approve approves the device code userCode as the person subject (User).
func (p *Provider) Approve(userCode, subject string) error {
	ctx := context.Background()
	if _, err := p.st.GetDeviceAuthorizationByUserCode(ctx, userCode); err != nil {
		return err
	}
	return p.st.CompleteDeviceAuthorization(ctx, userCode, subject)
}

// NextCode returns the user code of the next device login (the one a
// client asked for since the last call, else the next one asked for),
// as the person reads it on their screen; it waits until one is asked
// for or ctx ends.
func (p *Provider) NextCode(ctx context.Context) (string, error) {
	select {
	case c := <-p.st.codes:
		return c, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Deny refuses the device code userCode.
func (p *Provider) Deny(userCode string) error {
	ctx := context.Background()
	if _, err := p.st.GetDeviceAuthorizationByUserCode(ctx, userCode); err != nil {
		return err
	}
	return p.st.DenyDeviceAuthorization(ctx, userCode)
}

// SetGroups sets the groups of the person subject, as the ID tokens
// issued from then on (at login or refresh) list them.
func (p *Provider) SetGroups(subject string, groups ...string) {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	p.st.groups[subject] = groups
}

// EndSessions revokes every refresh token of the person subject at
// [ClientID]: the issuer refuses their next refresh (invalid_grant).
func (p *Provider) EndSessions(subject string) {
	// The example storage keeps the tokens of the device grant without
	// their client id (see refreshRequest).
	for _, id := range []string{ClientID, ""} {
		_ = p.st.TerminateSession(context.Background(), subject, id)
	}
}

// SetDown makes the issuer answer every request 503 (true) or serve again
// (false).
func (p *Provider) SetDown(down bool) { p.down.Store(down) }

// Rotate replaces the signing key with a new one of a new key id; the
// JWKS serves only the new key from then on.
func (p *Provider) Rotate() { p.st.rotate() }

// KeyID is the id of the current signing key.
func (p *Provider) KeyID() string {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	return p.st.kid
}

// PublicKeyPEM is the current public key as PEM, as an attacker reads it
// from the JWKS.
func (p *Provider) PublicKeyPEM() []byte {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	der, _ := x509.MarshalPKIXPublicKey(&p.st.key.PublicKey)
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// Claims returns the claims of a fresh token of the provider: iss, aud
// (Audience), sub, iat, nbf and exp (in 5 minutes), then extra over them
// (a nil value removes a claim).
func (p *Provider) Claims(extra map[string]any) map[string]any {
	now := time.Now()
	c := map[string]any{
		"iss": p.URL, "aud": Audience, "sub": "repo:acme/templates:ref:refs/heads/main",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
	}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return c
}

// Token returns a token of the provider with [Provider.Claims](extra),
// signed RS256 with its current key.
func (p *Provider) Token(t testing.TB, extra map[string]any) string {
	t.Helper()
	tok, err := p.SignedToken(extra)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// SignedToken is [Provider.Token] outside a testing.TB.
func (p *Provider) SignedToken(extra map[string]any) (string, error) {
	p.st.mu.Lock()
	key, kid := p.st.key, p.st.kid
	p.st.mu.Unlock()
	return sign(jose.RS256, key, kid, p.Claims(extra))
}

// Sign signs claims with key as alg, kid in the header: for the hostile
// tokens (a key the issuer never published, HS256 keyed with the public
// key).
func Sign(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	t.Helper()
	tok, err := sign(alg, key, kid, claims)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func sign(alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) (string, error) {
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader(jose.HeaderKey("kid"), kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	jws, err := s.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

// NewKey returns a fresh RSA key (for tokens signed with a key the
// issuer never published).
func NewKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// keyStorage is the example storage of zitadel/oidc with a signing key
// that can be rotated.
type keyStorage struct {
	*storage.Storage
	mu     sync.Mutex
	key    *rsa.PrivateKey
	kid    string
	n      int
	groups map[string][]string // by subject
	// codes receives each user code the device grant hands out.
	codes chan string
}

// StoreDeviceAuthorization implements op.DeviceAuthorizationStorage, and
// hands the user code to [Provider.NextCode].
func (s *keyStorage) StoreDeviceAuthorization(ctx context.Context, clientID, deviceCode, userCode string, expires time.Time, scopes []string) error {
	if err := s.Storage.StoreDeviceAuthorization(ctx, clientID, deviceCode, userCode, expires, scopes); err != nil {
		return err
	}
	select {
	case s.codes <- userCode:
	default: // nobody waits for that many codes
	}
	return nil
}

// deviceClient is the public client with the device grant added to the
// example's native client (code and refresh token).
type deviceClient struct{ op.Client }

func (c deviceClient) GrantTypes() []oidc.GrantType {
	return append(c.Client.GrantTypes(), oidc.GrantTypeDeviceCode)
}

// refreshRequest names ClientID as the client of a refresh token that the
// example storage saved without one (it does so for the device grant),
// so that op's check that the refreshing client is the token's passes.
type refreshRequest struct{ op.RefreshTokenRequest }

func (r refreshRequest) GetClientID() string {
	if id := r.RefreshTokenRequest.GetClientID(); id != "" {
		return id
	}
	return ClientID
}

// TokenRequestByRefreshToken implements op.Storage (see refreshRequest).
func (s *keyStorage) TokenRequestByRefreshToken(ctx context.Context, token string) (op.RefreshTokenRequest, error) {
	r, err := s.Storage.TokenRequestByRefreshToken(ctx, token)
	if err != nil {
		return nil, err
	}
	return refreshRequest{r}, nil
}

// IDTokenUserinfoClaimsAssertion puts the e-mail and profile claims in
// the ID token, as Keycloak, Okta and Dex do.
func (c deviceClient) IDTokenUserinfoClaimsAssertion() bool { return true }

// GetClientByClientID implements op.Storage: ClientID gets the device
// grant.
func (s *keyStorage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil || id != ClientID {
		return c, err
	}
	return deviceClient{c}, nil
}

// SetUserinfoFromRequest implements op.CanSetUserinfoFromRequest: the
// example's claims, and "groups" when the scope asks for them.
func (s *keyStorage) SetUserinfoFromRequest(ctx context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, info, req, scopes); err != nil {
		return err
	}
	if slices.Contains(scopes, "groups") {
		s.mu.Lock()
		g := append([]string{}, s.groups[req.GetSubject()]...)
		s.mu.Unlock()
		info.AppendClaims("groups", g)
	}
	return nil
}

func (s *keyStorage) rotate() {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	s.key, s.kid = k, fmt.Sprintf("key-%d", s.n)
}

type signingKey struct {
	key *rsa.PrivateKey
	kid string
}

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k signingKey) Key() any                                    { return k.key }
func (k signingKey) ID() string                                  { return k.kid }

type publicKey struct{ signingKey }

func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.key.PublicKey }

// SigningKey implements op.Storage.
func (s *keyStorage) SigningKey(ctx context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return signingKey{s.key, s.kid}, nil
}

// SignatureAlgorithms implements op.Storage.
func (s *keyStorage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

// KeySet implements op.Storage: the current public key only.
func (s *keyStorage) KeySet(ctx context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return []op.Key{publicKey{signingKey{s.key, s.kid}}}, nil
}
