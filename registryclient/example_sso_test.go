package registryclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/jigkit/jig/internal/oidctest"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// A person logs in at the organisation's issuer with the device grant and
// exchanges the ID token for the server's session token; the issuer's
// refresh token renews it later.
func ExampleDeviceLogin() {
	ctx := context.Background()
	issuer, stop, _ := oidctest.Start() // the organisation's issuer (Keycloak, Dex...)
	defer stop()
	issuer.SetGroups(oidctest.User, "platform")
	auth, _ := registryserver.ParseAuthConfig([]byte(`{
  "sso": {"issuer": "` + issuer.URL + `", "clientId": "jig-cli", "scopes": ["openid", "email", "groups", "offline_access"]},
  "@team": [{"issuer": "` + issuer.URL + `", "claims": {"groups": "platform"}, "scopes": ["publish"]}]
}`))
	h, _ := registryserver.New(registryserver.WithStorage(memory.New()), registryserver.WithAuth(auth))
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	c, _ := registryclient.New(srv.URL)
	info, _ := c.SSO(ctx) // GET /auth/sso: where to log in
	toks, err := registryclient.DeviceLogin(ctx, nil, *info, func(d registryclient.DeviceCode) {
		fmt.Println("open the issuer's /device page and enter the code")
		_ = issuer.Approve(d.UserCode, oidctest.User) // the person approves in a browser
	})
	if err != nil {
		panic(err)
	}
	session, _ := c.ExchangeSSO(ctx, toks.IDToken) // POST /auth/sso/token
	fmt.Println(session.Person, session.Namespaces)

	// An hour later: renewed with the refresh token, groups read anew.
	renewed, _ := registryclient.RefreshSSO(ctx, nil, registryclient.SSOSession{
		Issuer: info.Issuer, ClientID: info.ClientID, Scopes: info.Scopes, RefreshToken: toks.RefreshToken})
	again, _ := c.ExchangeSSO(ctx, renewed.IDToken)
	fmt.Println(again.Groups)

	// The person left: the issuer refuses the next renewal.
	issuer.EndSessions(oidctest.User)
	_, err = registryclient.RefreshSSO(ctx, nil, registryclient.SSOSession{
		Issuer: info.Issuer, ClientID: info.ClientID, RefreshToken: renewed.RefreshToken})
	var ie *registryclient.IssuerError
	fmt.Println(errors.As(err, &ie), ie.Code)
	// Output:
	// open the issuer's /device page and enter the code
	// test-user@zitadel.ch map[@team:[read publish]]
	// [platform]
	// true invalid_grant
}
