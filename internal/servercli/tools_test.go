package servercli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/testenv"
)

// runToolArgs runs a helper command and returns its exit code and output.
func runToolArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(t.Context(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestTokenNewOpensTheNamespace makes a token with "token new", puts the
// printed entry in auth.json, and reads the gated namespace with it.
func TestTokenNewOpensTheNamespace(t *testing.T) {
	t.Parallel()
	// The @ is optional, as for --default-namespace.
	code, out, errOut := runToolArgs(t, "token", "new", "--namespace", "team", "--publish", "--expires", "90d", "--mark", "ci", "--json")
	if code != 0 {
		t.Fatalf("token new: exit %d, stderr %s", code, errOut)
	}
	var got struct {
		Token, ID, Namespace string
		Entry                map[string]any
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("token new --json: %v in %s", err, out)
	}
	if got.Namespace != "@team" {
		t.Errorf("got namespace %q, want @team", got.Namespace)
	}
	if !strings.HasPrefix(got.Token, "jig_") || len(got.Token) < 40 {
		t.Errorf("got token %q, want jig_ and 43 base64url characters", got.Token)
	}
	if _, ok := got.Entry["token"]; ok || got.Entry["tokenSha256"] == nil || got.Entry["publish"] != true || got.Entry["mark"] != "ci" {
		t.Errorf("got entry %v, want tokenSha256, publish true and mark ci, and no token", got.Entry)
	}
	exp, err := time.Parse(time.RFC3339, got.Entry["expiresAt"].(string))
	if err != nil || exp.Sub(time.Now()) < 89*24*time.Hour || exp.Sub(time.Now()) > 91*24*time.Hour {
		t.Errorf("got expiresAt %v (%v), want about 90 days from now", got.Entry["expiresAt"], err)
	}
	if strings.Contains(out, `"entry": {`) && strings.Contains(string(testenv.MustJSON(t, got.Entry)), got.Token) {
		t.Errorf("the entry holds the token in clear: %v", got.Entry)
	}

	dir := t.TempDir()
	auth := filepath.Join(dir, "auth.json")
	if err := os.WriteFile(auth, []byte(`{"@main": [], "@team": [`+string(testenv.MustJSON(t, got.Entry))+`]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	base, _, _ := start(t, "--storage-root", filepath.Join(dir, "data"), "--auth-config-path", auth)
	for _, tc := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {"jig_wrong", http.StatusUnauthorized}, {got.Token, http.StatusOK}} {
		hdr := map[string]string{}
		if tc.token != "" {
			hdr["Authorization"] = "Bearer " + tc.token
		}
		resp, body := getFrom(t, base+"/namespaces/@team/registries", hdr)
		if resp.StatusCode != tc.want && !(tc.want == http.StatusOK && resp.StatusCode == http.StatusNotFound) {
			t.Errorf("GET /namespaces/@team/registries with token %q: got %d %s, want %d", tc.token, resp.StatusCode, body, tc.want)
		}
	}

	// auth check lists the token by its id, never the token itself.
	code, out, errOut = runToolArgs(t, "auth", "check", auth)
	if code != 0 {
		t.Fatalf("auth check: exit %d, stderr %s", code, errOut)
	}
	for _, want := range []string{"@main  public", "@team  gated: 1 token", "  " + got.ID + "  read, publish, census:report  mark \"ci\"  expires "} {
		if !strings.Contains(out, want) {
			t.Errorf("auth check output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, got.Token) {
		t.Errorf("auth check prints the token:\n%s", out)
	}

	// health asks the running server.
	code, out, errOut = runToolArgs(t, "health", "--url", base)
	if code != 0 || !strings.Contains(out, `"status":"ok"`) {
		t.Errorf("health: exit %d, stdout %s, stderr %s; want 0 and the health report", code, out, errOut)
	}
}

func TestToolErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "auth.json")
	if err := os.WriteFile(bad, []byte(`{"@main": [], "@team": [{"token": "plain-secret"}], "@broken": [{"publish": true}], "NoAt": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		code      int
		stdout    []string
		stderr    []string
		notOutput string
	}{
		{name: "bad namespace", args: []string{"token", "new", "--namespace", "Team"}, code: 1,
			stderr: []string{`--namespace: invalid namespace "@Team"`, "did you mean @team?"}},
		{name: "bad namespace, json", args: []string{"token", "new", "--namespace", "x-", "--json"}, code: 1,
			stdout: []string{`"error": {`, `"code": "ERROR"`, `"message": "--namespace: invalid namespace \"@x-\"`}},
		{name: "usage error, json", args: []string{"token", "new", "--json"}, code: 1,
			stdout: []string{`"error": {`, `"code": "USAGE"`, `"hint": "Run 'jig-server token --help' for usage."`}},
		{name: "bad lifetime", args: []string{"token", "new", "--namespace", "@team", "--expires", "soon"}, code: 1,
			stderr: []string{`--expires "soon" is not a lifetime; use days (90d)`}},
		{name: "past date", args: []string{"token", "new", "--namespace", "@team", "--expires", "2001-01-01"}, code: 1,
			stderr: []string{"--expires 2001-01-01 is in the past"}},
		{name: "rejected namespaces", args: []string{"auth", "check", bad}, code: 1,
			stdout: []string{"@team  gated: 1 token", "(stored in clear)", `error: auth.json: namespace "@broken" rejected: entry 0: has neither token nor tokenSha256`, `error: auth.json: namespace "NoAt" rejected`,
				"error: @team: token ", "is stored in clear", "auth.json: 3 errors, 0 warnings\n"},
			stderr:    []string{"auth.json: 3 errors, 0 warnings; fix the errors and run 'jig-server auth check"},
			notOutput: "plain-secret"},
		{name: "missing file", args: []string{"auth", "check", filepath.Join(dir, "nope.json")}, code: 1,
			stderr: []string{"nope.json"}},
		{name: "health of nothing", args: []string{"health", "--url", "http://127.0.0.1:1", "--timeout", "2s"}, code: 1,
			stderr: []string{"health check of http://127.0.0.1:1 failed"}},
		{name: "help", args: []string{"token", "new", "--help"}, code: 0,
			stdout: []string{"jig-server token new --namespace @team --publish --expires 90d --mark ci"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runToolArgs(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit: got %d, want %d; stdout %s stderr %s", code, tt.code, out, errOut)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.stderr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if tt.notOutput != "" && strings.Contains(out+errOut, tt.notOutput) {
				t.Errorf("output holds %q", tt.notOutput)
			}
		})
	}
}

// TestAuthCheckCensus: auth check shows which namespaces' census a token
// may read, in the text and in the JSON.
func TestAuthCheckCensus(t *testing.T) {
	t.Parallel()
	auth := filepath.Join(t.TempDir(), "auth.json")
	sum := strings.Repeat("ab", 32)
	if err := os.WriteFile(auth, []byte(`{"@main": [], "@ops": [{"tokenSha256": "`+sum+`", "census": ["@main", "@ops"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runToolArgs(t, "auth", "check", auth)
	if code != 0 || !strings.Contains(out, "  "+sum[:12]+"  read, census:report, census of @main, @ops\n") {
		t.Errorf("auth check: exit %d\n%s%s\nwant the census namespaces on the token's line", code, out, errOut)
	}
	code, out, _ = runToolArgs(t, "auth", "check", "--json", auth)
	if code != 0 || !strings.Contains(out, `"census": [`+"\n"+`            "@main",`) {
		t.Errorf("auth check --json: exit %d\n%s\nwant the census list", code, out)
	}
}

// TestTokenNewCensus: token new --census prints an entry that lets the
// token read the census of the namespaces listed (public ones included)
// and of no other; a bad namespace is refused.
func TestTokenNewCensus(t *testing.T) {
	t.Parallel()
	code, out, errOut := runToolArgs(t, "token", "new", "--namespace", "ops", "--census", "main,@ops,@main", "--json")
	if code != 0 {
		t.Fatalf("token new: exit %d, stderr %s", code, errOut)
	}
	var got struct {
		Token string
		Entry map[string]any
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("token new --json: %v in %s", err, out)
	}
	if c, _ := json.Marshal(got.Entry["census"]); string(c) != `["@main","@ops"]` {
		t.Errorf("census: got %s, want [\"@main\",\"@ops\"]", c)
	}
	dir := t.TempDir()
	auth := filepath.Join(dir, "auth.json")
	if err := os.WriteFile(auth, []byte(`{"@main": [], "@other": [], "@ops": [`+string(testenv.MustJSON(t, got.Entry))+`]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	base, _, _ := start(t, "--storage-root", filepath.Join(dir, "data"), "--auth-config-path", auth)
	for _, tc := range []struct {
		ns, token string
		want      int
	}{
		{"@main", got.Token, http.StatusOK},
		{"@ops", got.Token, http.StatusOK},
		{"@other", got.Token, http.StatusForbidden},
		{"@main", "", http.StatusUnauthorized},
	} {
		hdr := map[string]string{}
		if tc.token != "" {
			hdr["Authorization"] = "Bearer " + tc.token
		}
		if resp, body := getFrom(t, base+"/census/"+tc.ns, hdr); resp.StatusCode != tc.want {
			t.Errorf("GET /census/%s with a token %v: got %d %s, want %d", tc.ns, tc.token != "", resp.StatusCode, body, tc.want)
		}
	}

	code, out, _ = runToolArgs(t, "token", "new", "--namespace", "ops", "--census", "@main")
	if code != 0 || !strings.Contains(out, "It reads @ops, and reads the census of @main; id ") || !strings.Contains(out, `"census":["@main"]`) {
		t.Errorf("token new --census text: exit %d\n%s", code, out)
	}
	if code, _, errOut := runToolArgs(t, "token", "new", "--namespace", "ops", "--census", "@Main"); code == 0 || !strings.Contains(errOut, "--census") || !strings.Contains(errOut, "@main") {
		t.Errorf("token new --census @Main: exit %d, stderr %s; want a refusal suggesting @main", code, errOut)
	}
}

// TestAuthCheckSeverity: a token stored in clear is an error (exit 1); an
// expired token is a warning (exit 0); each finding says which it is and
// a summary line counts them, in text and in JSON.
func TestAuthCheckSeverity(t *testing.T) {
	t.Parallel()
	const hashed = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b" // sha256("secret")
	for _, tc := range []struct {
		name   string
		auth   string
		code   int
		stdout []string
		errors int
		warns  int
	}{
		{name: "clear token", auth: `{"@team": [{"token": "plain-secret"}]}`, code: 1,
			stdout: []string{"error: @team: token ", "is stored in clear", "auth.json: 1 error, 0 warnings\n"}, errors: 1},
		{name: "expired token", auth: `{"@team": [{"tokenSha256": "` + hashed + `", "expiresAt": "2001-01-01T00:00:00Z"}]}`, code: 0,
			stdout: []string{"warning: @team: token 2bb80d537b1d expired on 2001-01-01T00:00:00Z; remove its entry, or issue a new one with jig-server token new --namespace @team", "auth.json: 0 errors, 1 warning\n"}, warns: 1},
		{name: "both", auth: `{"@team": [{"tokenSha256": "` + hashed + `", "expiresAt": "2001-01-01T00:00:00Z"}], "@ci": [{"token": "plain-secret"}]}`, code: 1,
			stdout: []string{"error: @ci: token ", "warning: @team: token ", "auth.json: 1 error, 1 warning\n"}, errors: 1, warns: 1},
		{name: "clean", auth: `{"@team": [{"tokenSha256": "` + hashed + `"}], "@main": []}`, code: 0,
			stdout: []string{"auth.json: 0 errors, 0 warnings\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			auth := filepath.Join(t.TempDir(), "auth.json")
			if err := os.WriteFile(auth, []byte(tc.auth), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runToolArgs(t, "auth", "check", auth)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out+errOut, "plain-secret") {
				t.Errorf("the token is printed:\n%s%s", out, errOut)
			}
			if tc.code != 0 && !strings.Contains(errOut, "fix the errors and run 'jig-server auth check "+auth+"' again") {
				t.Errorf("stderr does not say what to do: %s", errOut)
			}
			code, out, _ = runToolArgs(t, "auth", "check", auth, "--json")
			var doc struct {
				Problems, Errors, Warnings []string
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("--json: %v in %s", err, out)
			}
			if code != tc.code || len(doc.Errors) != tc.errors || len(doc.Warnings) != tc.warns || len(doc.Problems) != tc.errors+tc.warns {
				t.Errorf("--json: exit %d, %d errors, %d warnings, %d problems; want %d, %d, %d\n%s", code, len(doc.Errors), len(doc.Warnings), len(doc.Problems), tc.code, tc.errors, tc.warns, out)
			}
		})
	}
}
