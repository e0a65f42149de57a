package rcfile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/jigkit/jig/registryclient"
)

// ssoRefreshMargin is how long before its expiry a session token is
// renewed: a request never leaves with a token about to end.
const ssoRefreshMargin = 30 * time.Second

// parseSSO decodes the "sso" object of namespace ns's entry; absent or
// null gives nil.
func parseSSO(ns string, raw json.RawMessage) (*registryclient.SSOSession, error) {
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var s registryclient.SSOSession
	if err := json.Unmarshal(raw, &s); err != nil || s.Issuer == "" || s.ClientID == "" {
		return nil, fmt.Errorf(`registry %s: "sso" must be an object {"issuer", "clientId", "refreshToken", "expiresAt"} as a device login saves it`, ns)
	}
	return &s, nil
}

// ssoSource is the token source of namespace ns's entry e, which has an
// SSO session: its token while it holds, then the one [Config.SSORefresh]
// gets, once for every client of this Config.
func (c *Config) ssoSource(ns string, e registryclient.Entry) registryclient.TokenSource {
	c.ssoMu.Lock()
	defer c.ssoMu.Unlock()
	if c.ssoState == nil {
		c.ssoState = map[string]*ssoState{}
	}
	st := c.ssoState[ns]
	if st == nil {
		st = &ssoState{token: e.Token, session: e.SSO.Clone()}
		c.ssoState[ns] = st
	}
	return func(ctx context.Context) (string, error) {
		st.mu.Lock()
		defer st.mu.Unlock()
		if !st.session.Expired(time.Now(), ssoRefreshMargin) {
			return st.token, nil
		}
		cur := e
		cur.Token, cur.SSO = st.token, st.session.Clone()
		tok, s, err := c.SSORefresh(ctx, ns, cur)
		if err != nil {
			return "", err
		}
		st.token, st.session = tok, s.Clone()
		return tok, nil
	}
}

// ssoState is the session of one namespace as this process knows it.
type ssoState struct {
	mu      sync.Mutex
	token   string
	session *registryclient.SSOSession
}
