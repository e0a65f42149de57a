package registryclient_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/registryclient"
)

const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJodHRwczovL3gifQ.c2ln"

// TestFindCIIdentity: each CI's way of giving the job its token, in
// order, and what is refused before anything is sent.
func TestFindCIIdentity(t *testing.T) {
	t.Parallel()
	var asked string
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer request-token" {
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		asked = r.URL.Query().Get("audience")
		_ = json.NewEncoder(w).Encode(map[string]string{"value": jwt})
	}))
	t.Cleanup(gh.Close)
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(jwt+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		env       map[string]string
		source    string // "" : none found
		err       string
		wantAsked string
	}{
		{"nothing", map[string]string{}, "", "", ""},
		{"JIG_OIDC_TOKEN", map[string]string{"JIG_OIDC_TOKEN": jwt, "JIG_ID_TOKEN": jwt}, "JIG_OIDC_TOKEN", "", ""},
		{"file", map[string]string{"JIG_OIDC_TOKEN_FILE": file}, "JIG_OIDC_TOKEN_FILE", "", ""},
		{"GitLab", map[string]string{"JIG_ID_TOKEN": jwt}, "GitLab CI (JIG_ID_TOKEN)", "", ""},
		{"GitHub", map[string]string{"ACTIONS_ID_TOKEN_REQUEST_URL": gh.URL + "/token?api-version=2.0", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "request-token"}, "GitHub Actions", "", "https://jig.example.com"},
		{"GitHub, audience set", map[string]string{"ACTIONS_ID_TOKEN_REQUEST_URL": gh.URL + "/token", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "request-token", "JIG_OIDC_AUDIENCE": "jig"}, "GitHub Actions", "", "jig"},
		{"GitHub refuses", map[string]string{"ACTIONS_ID_TOKEN_REQUEST_URL": gh.URL + "/token", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "wrong"}, "", "give the job \"permissions: id-token: write\"", ""},
		{"not a JWT", map[string]string{"JIG_OIDC_TOKEN": "jig_static"}, "", "is not a JWT", ""},
		{"missing file", map[string]string{"JIG_OIDC_TOKEN_FILE": filepath.Join(t.TempDir(), "none")}, "", "JIG_OIDC_TOKEN_FILE=", ""},
	}
	for _, tt := range tests {
		asked = ""
		id, err := registryclient.FindCIIdentity(t.Context(), func(k string) string { return tt.env[k] }, "https://jig.example.com", nil)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: got %v, want an error saying %q", tt.name, err, tt.err)
			}
			if err != nil && strings.Contains(err.Error(), "request-token") {
				t.Errorf("%s: the error holds the request token: %v", tt.name, err)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.source == "" && id != nil:
			t.Errorf("%s: got %+v, want none", tt.name, id)
		case tt.source != "" && (id == nil || id.Source != tt.source || id.Token != jwt):
			t.Errorf("%s: got %+v, want the token from %s", tt.name, id, tt.source)
		}
		if asked != tt.wantAsked {
			t.Errorf("%s: audience asked: got %q, want %q", tt.name, asked, tt.wantAsked)
		}
	}
}
