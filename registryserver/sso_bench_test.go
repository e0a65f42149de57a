package registryserver_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/oidctest"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// ssoBenchAuth is an auth.json of n gated namespaces (one hashed token
// each) whose first ten also give the group platform of p's people
// publish rights.
func ssoBenchAuth(p string, n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"sso": {"issuer": %q, "clientId": %q}`, p, oidctest.ClientID)
	for i := range n {
		sum := sha256.Sum256(fmt.Appendf(nil, "token-%d", i))
		fmt.Fprintf(&b, `, "@ns%d": [{"tokenSha256": "%x"}`, i, sum)
		if i < 10 {
			fmt.Fprintf(&b, `, {"issuer": %q, "claims": {"groups": "platform"}, "scopes": ["publish"]}`, p)
		}
		b.WriteString("]")
	}
	b.WriteString("}")
	return []byte(b.String())
}

// BenchmarkSSO measures the exchange (POST /auth/sso/token: an RS256 ID
// token checked, a session token signed) and GET /auth/whoami with a
// session token, with 10,000 and 100,000 namespaces in auth.json: both
// match the claim rules once, so their cost follows the rules, not the
// namespaces.
func BenchmarkSSO(b *testing.B) {
	p := oidctest.New(b)
	for _, n := range []int{10_000, 100_000} {
		a, err := registryserver.ParseAuthConfig(ssoBenchAuth(p.URL, n))
		if err != nil || len(a.Warnings()) > 0 {
			b.Fatal(err, a.Warnings())
		}
		h, err := registryserver.New(registryserver.WithStorage(memory.New()), registryserver.WithAuth(a),
			registryserver.WithSSOKey(ssoKey), registryserver.WithRateLimit(1<<30, time.Minute))
		if err != nil {
			b.Fatal(err)
		}
		idToken := p.Token(b, personClaims(map[string]any{"groups": []any{"platform"}}))
		body, _ := json.Marshal(wire.SSOTokenRequest{IDToken: idToken})
		r := send(h, http.MethodPost, wire.SSOTokenPath, "", body, "application/json")
		var tok wire.SSOToken
		if r.status != 200 || json.Unmarshal([]byte(r.body), &tok) != nil || len(tok.Namespaces) != 10 {
			b.Fatalf("exchange: %d %.200s", r.status, r.body)
		}
		b.Run(fmt.Sprintf("exchange/namespaces=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := send(h, http.MethodPost, wire.SSOTokenPath, "", body, "application/json"); r.status != 200 {
					b.Fatal(r.status, r.body)
				}
			}
		})
		b.Run(fmt.Sprintf("whoami/namespaces=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := send(h, http.MethodGet, wire.WhoamiPath, tok.Token, nil, ""); r.status != 200 {
					b.Fatal(r.status, r.body)
				}
			}
		})
		_ = h.Close()
	}
}
