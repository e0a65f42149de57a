package registryclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/safefile"
)

// Environment variables [CIIdentity] reads.
const (
	// EnvOIDCToken holds an OIDC identity token for any CI (Forgejo,
	// Woodpecker, Buildkite, Jenkins, Kubernetes...).
	EnvOIDCToken = "JIG_OIDC_TOKEN"
	// EnvOIDCTokenFile names a file holding one (a Kubernetes projected
	// service account token, for example), read anew every time.
	EnvOIDCTokenFile = "JIG_OIDC_TOKEN_FILE"
	// EnvOIDCAudience overrides the audience asked of GitHub Actions (by
	// default the server's origin, such as https://jig.example.com).
	EnvOIDCAudience = "JIG_OIDC_AUDIENCE"
	// EnvGitLabIDToken is the id_tokens variable GitLab CI jobs declare
	// for jig (see docs/identity.md).
	EnvGitLabIDToken = "JIG_ID_TOKEN"
	// The variables GitHub Actions sets in a job with
	// "permissions: id-token: write".
	envGitHubRequestURL   = "ACTIONS_ID_TOKEN_REQUEST_URL"
	envGitHubRequestToken = "ACTIONS_ID_TOKEN_REQUEST_TOKEN"
)

// maxIdentityTokenBytes bounds an identity token (and GitHub's answer).
const maxIdentityTokenBytes = 16 << 10

// CIIdentity is an OIDC identity token the CI gave the job, and where it
// came from ("JIG_OIDC_TOKEN", "GitHub Actions"...), for messages. The
// token itself is never printed.
type CIIdentity struct {
	Token  string
	Source string
}

// FindCIIdentity returns the CI's identity token for a server whose
// origin is audience (the default audience asked of GitHub Actions), in
// this order: JIG_OIDC_TOKEN, JIG_OIDC_TOKEN_FILE, GitLab's JIG_ID_TOKEN,
// then GitHub Actions' token service (ACTIONS_ID_TOKEN_REQUEST_URL and
// _TOKEN, asked for the audience JIG_OIDC_AUDIENCE or audience). It
// returns nil, nil when the environment offers none. getenv is
// os.Getenv in jig; client makes GitHub's request (nil: a client with a
// 10s timeout).
//
// API: GET $ACTIONS_ID_TOKEN_REQUEST_URL&audience=<audience>
func FindCIIdentity(ctx context.Context, getenv func(string) string, audience string, client *http.Client) (*CIIdentity, error) {
	if tok := strings.TrimSpace(getenv(EnvOIDCToken)); tok != "" {
		return checkIdentity(tok, EnvOIDCToken)
	}
	if p := getenv(EnvOIDCTokenFile); p != "" {
		data, err := safefile.ReadFile(p, maxIdentityTokenBytes)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w", EnvOIDCTokenFile, p, err)
		}
		return checkIdentity(strings.TrimSpace(string(data)), EnvOIDCTokenFile)
	}
	if tok := strings.TrimSpace(getenv(EnvGitLabIDToken)); tok != "" {
		return checkIdentity(tok, "GitLab CI ("+EnvGitLabIDToken+")")
	}
	reqURL, reqTok := getenv(envGitHubRequestURL), getenv(envGitHubRequestToken)
	if reqURL == "" || reqTok == "" {
		return nil, nil
	}
	if a := getenv(EnvOIDCAudience); a != "" {
		audience = a
	}
	tok, err := githubIdentity(ctx, reqURL, reqTok, audience, client)
	if err != nil {
		return nil, err
	}
	return checkIdentity(tok, "GitHub Actions")
}

// checkIdentity refuses what cannot be a token before it is sent.
func checkIdentity(tok, source string) (*CIIdentity, error) {
	switch {
	case tok == "":
		return nil, fmt.Errorf("%s is empty", source)
	case len(tok) > maxIdentityTokenBytes:
		return nil, fmt.Errorf("the identity token of %s is larger than %d bytes", source, maxIdentityTokenBytes)
	case strings.ContainsAny(tok, "\r\n \t"):
		return nil, fmt.Errorf("the identity token of %s holds spaces or line breaks", source)
	case strings.Count(tok, ".") != 2:
		return nil, fmt.Errorf("the identity token of %s is not a JWT (three parts separated by dots)", source)
	}
	return &CIIdentity{Token: tok, Source: source}, nil
}

// githubIdentity asks GitHub Actions' token service for a token for
// audience.
func githubIdentity(ctx context.Context, reqURL, reqTok, audience string, client *http.Client) (string, error) {
	u, err := url.Parse(reqURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("%s is not a URL", envGitHubRequestURL)
	}
	if audience != "" {
		q := u.Query()
		q.Set("audience", audience)
		u.RawQuery = q.Encode()
	}
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+reqTok)
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL carries nothing secret, but keep messages short
		}
		return "", fmt.Errorf("asking GitHub Actions for an identity token: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxIdentityTokenBytes+1))
	if err != nil {
		return "", fmt.Errorf("asking GitHub Actions for an identity token: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GitHub Actions refused an identity token (%s); give the job \"permissions: id-token: write\"", resp.Status)
	}
	var v struct {
		Value string `json:"value"`
	}
	if len(body) > maxIdentityTokenBytes || json.Unmarshal(body, &v) != nil || v.Value == "" {
		return "", errors.New("GitHub Actions answered without an identity token")
	}
	return v.Value, nil
}

// Origin returns the scheme and host of a server's base URL, the
// audience jig asks the CI for by default ("https://jig.example.com").
func Origin(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return baseURL
	}
	return u.Scheme + "://" + u.Host
}
