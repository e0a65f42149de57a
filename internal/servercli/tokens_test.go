package servercli

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/jigkit/jig/registryserver"
)

const startAuth = `{
  "@main": [],
  "@team": [{"tokenSha256": "0000000000000000000000000000000000000000000000000000000000000000", "name": "old"}],
  "issuers": {"kept": "as written"}
}
`

func writeAuth(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "auth.json")
	if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTokenCreateListRevoke: a created token opens its namespace with its
// scopes as soon as the file is loaded; list never shows it; revoke
// closes it again. Other members of the file are kept.
func TestTokenCreateListRevoke(t *testing.T) {
	t.Parallel()
	p := writeAuth(t, startAuth)
	code, out, errOut := runToolArgs(t, "token", "create", "--auth-config", p, "--namespace", "team", "--scope", "publish", "--expires", "90d", "--name", "ci-release", "--json")
	if code != 0 {
		t.Fatalf("token create: exit %d: %s", code, errOut)
	}
	var made struct {
		Token, ID string
	}
	if err := json.Unmarshal([]byte(out), &made); err != nil || !strings.HasPrefix(made.Token, "jig_") {
		t.Fatalf("token create --json: got %s (%v), want a jig_ token", out, err)
	}
	data, _ := os.ReadFile(p)
	if strings.Contains(string(data), made.Token) || !strings.Contains(string(data), `"issuers": {`) {
		t.Errorf("auth.json: got\n%s\nwant the hash only, and the issuers member kept", data)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode: got %v, want the file's 0640 kept", fi.Mode().Perm())
	}
	a, err := registryserver.LoadAuthConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := a.Authorize("@team", made.Token, time.Now()); err != nil || !g.Publish || g.Mark != "ci-release" {
		t.Errorf("Authorize: got %+v, %v, want publish as ci-release", g, err)
	}
	if _, err := a.Authorize("@team", made.Token, time.Now().AddDate(0, 0, 91)); !errors.Is(err, registryserver.ErrTokenExpired) {
		t.Errorf("Authorize in 91 days: got %v, want it expired", err)
	}

	_, out, _ = runToolArgs(t, "token", "list", "--auth-config", p)
	if !strings.Contains(out, made.ID+"  @team       ci-release") || !strings.Contains(out, "read,publish") || strings.Contains(out, made.Token) {
		t.Errorf("token list: got\n%s\nwant the entry by id and name, without the token", out)
	}

	if code, _, errOut := runToolArgs(t, "token", "revoke", "--auth-config", p, "ci-release"); code != 0 {
		t.Fatalf("token revoke: exit %d: %s", code, errOut)
	}
	a, _ = registryserver.LoadAuthConfig(p)
	if _, err := a.Authorize("@team", made.Token, time.Now()); !errors.Is(err, registryserver.ErrInvalidToken) {
		t.Errorf("after revoke: got %v, want ErrInvalidToken", err)
	}
}

// TestTokenCommandsRefuse: each refusal says what to do and leaves
// auth.json byte-identical.
func TestTokenCommandsRefuse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"public namespace", []string{"create", "--namespace", "@main", "--expires", "1d"}, "@main is public in"},
		{"name taken", []string{"create", "--namespace", "@team", "--expires", "1d", "--name", "old"}, `already has a token named "old" (in @team)`},
		{"bad scope", []string{"create", "--namespace", "@team", "--expires", "1d", "--scope", "read,root"}, `--scope: unknown scope "root"`},
		{"bad name", []string{"create", "--namespace", "@team", "--expires", "1d", "--name", "../x"}, `--name "../x": a name is`},
		{"never without a name", []string{"create", "--namespace", "@team", "--expires", "never"}, "needs a --name"},
		{"no expiry", []string{"create", "--namespace", "@team"}, "--expires"},
		{"past", []string{"create", "--namespace", "@team", "--expires", "2001-01-01"}, "is in the past"},
		{"bad namespace", []string{"create", "--namespace", "Team!", "--expires", "1d"}, "--namespace: invalid namespace"},
		{"last token", []string{"revoke", "old"}, "would leave its list empty, which makes @team public"},
		{"unknown token", []string{"revoke", "nobody"}, `no token entry of`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := writeAuth(t, startAuth)
			args := append([]string{"token"}, tt.args...)
			code, _, errOut := runToolArgs(t, append(args, "--auth-config", p)...)
			if code == 0 || !strings.Contains(errOut, tt.stderr) {
				t.Errorf("got exit %d, stderr %q, want a failure saying %q", code, errOut, tt.stderr)
			}
			if data, _ := os.ReadFile(p); string(data) != startAuth {
				t.Errorf("auth.json changed:\n%s", data)
			}
		})
	}
}

// TestTokenCreateConcurrent: editors running at once each add their
// entry; none is lost.
func TestTokenCreateConcurrent(t *testing.T) {
	t.Parallel()
	p := writeAuth(t, startAuth)
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if code, _, errOut := runToolArgs(t, "token", "create", "--auth-config", p, "--namespace", "@team", "--expires", "1d", "--name", fmt.Sprintf("job-%d", i)); code != 0 {
				t.Errorf("job %d: exit %d: %s", i, code, errOut)
			}
		})
	}
	wg.Wait()
	a, err := registryserver.LoadAuthConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range a.Describe(time.Now()) {
		if ns.Namespace == "@team" && len(ns.Tokens) != n+1 {
			t.Errorf("@team: got %d entries, want %d", len(ns.Tokens), n+1)
		}
	}
}

// TestWarnInClear: tokens in clear are named by id in one warning, never
// by token or namespace.
func TestWarnInClear(t *testing.T) {
	t.Parallel()
	a, err := registryserver.ParseAuthConfig([]byte(`{"@secret-team": [{"token": "plain-secret"}, {"tokenSha256": "` + strings.Repeat("ab", 32) + `"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.InfoLevel)
	warnInClear(zap.New(core), a)
	warnInClear(zap.New(core), nil)
	all := logs.All()
	if len(all) != 1 {
		t.Fatalf("got %d log lines, want 1", len(all))
	}
	line := fmt.Sprint(all[0].Message, all[0].ContextMap())
	id := registryserver.TokenID(sha256.Sum256([]byte("plain-secret")))
	if !strings.Contains(line, "tokenIds:["+id+"]") {
		t.Errorf("got %s, want the token's id", line)
	}
	if strings.Contains(line, "plain-secret") || strings.Contains(line, "@secret-team") {
		t.Errorf("the warning names the token or its namespace: %s", line)
	}
}
